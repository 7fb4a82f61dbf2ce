"""A person: the owner of memory, reached from one or more platform accounts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Person:
    """Who sent a message, after account -> person resolution; ``is_admin`` comes from config."""

    person_id: str
    is_admin: bool = False
    display_name: str | None = None
