"""The fact store port of the ``local`` memory provider: short facts, each owned by exactly one person.

Invariants every backend keeps: every read and write names a person and touches only that person's
facts; a fact is stored once per person (adding an exact duplicate is a no-op); user text is only ever
data — ``top`` ranks by the query's words and never interprets query syntax, so no input can fail it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Fact:
    """One remembered fact and where it came from (``memory:user``, ``turn`` …)."""

    content: str
    source: str


class FactStore(Protocol):
    """Per-person facts; every method is a coroutine that never blocks the event loop."""

    async def create(self) -> None:
        """Make the store usable (create it if it is missing); safe to call again and from many processes."""
        ...

    async def add(self, person_id: str, content: str, source: str) -> bool:
        """Store a fact for the person; False if the person already had exactly this fact."""
        ...

    async def remove(self, person_id: str, content: str) -> int:
        """Forget the person's fact with exactly this content; how many were removed (0 or 1)."""
        ...

    async def replace(self, person_id: str, old: str, new: str, source: str) -> None:
        """One transaction: forget ``old`` and store ``new`` (unless the person already has it)."""
        ...

    async def forget_person(self, person_id: str) -> int:
        """Delete every fact of the person, leaving no trace of their text in the files; how many."""
        ...

    async def count(self, person_id: str) -> int:
        """How many facts the person has."""
        ...

    async def top(self, person_id: str, query: str, limit: int) -> list[Fact]:
        """The person's facts that best match ``query``'s words, then their newest ones, up to ``limit``.

        Ranking among matches is by relevance (the backend's text ranking); an empty or wordless query
        returns the newest facts.
        """
        ...
