"""Which document holds which store: per-person or shared MEMORY.md/USER.md plus the global MEMORY.md.

Invariants: a person id becomes at most one path component and can never escape ``memories/``; a store's
``key`` (its path relative to ``memories/``) names it on every document backend, and ``location_of`` maps
a key back only to a store the current ``memory.isolation`` uses; the global store is readable by everyone
and writable only by an admin caller.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from agent_core.memory.errors import InvalidPersonIdError, InvalidTargetError
from agent_core.memory.settings import MemorySettings
from agent_core.storage.documents import PERSON_ID, key_problem


class Target(enum.StrEnum):
    """The three curated stores a caller can address."""

    MEMORY = "memory"
    USER = "user"
    GLOBAL = "global"


@dataclass(frozen=True)
class StoreLocation:
    """Where one store lives and how large it may grow."""

    target: Target
    path: Path
    char_limit: int
    key: str
    """The document's name on every backend: ``path`` relative to ``memories/`` (``people/ada/USER.md``)."""

    @property
    def label(self) -> str:
        """Short human name of the file, used in markers and messages."""
        return f"global {self.path.name}" if self.target is Target.GLOBAL else self.path.name


def parse_target(target: Target | str) -> Target:
    """``target`` as a Target; raises InvalidTargetError for any other name."""
    try:
        return Target(target)
    except ValueError:
        raise InvalidTargetError(f"Invalid target '{target}'. Use 'memory', 'user' or 'global'.") from None


def validate_person_id(person_id: str | None) -> str:
    """``person_id`` if it is a safe single path component; raises InvalidPersonIdError otherwise."""
    if person_id is None or not PERSON_ID.fullmatch(person_id) or person_id in {".", ".."}:
        raise InvalidPersonIdError(f"invalid person id {person_id!r}: expected 1-128 of [A-Za-z0-9._@+=-]")
    return person_id


def can_write(target: Target, is_admin: bool) -> bool:
    """Admin rule: the global store changes only in an admin's conversation."""
    return is_admin or target is not Target.GLOBAL


class MemoryLayout:
    """Maps (person, target) to a store location under ``<home>/memories``."""

    def __init__(self, home: Path, settings: MemorySettings) -> None:
        self._root = home / "memories"
        self._settings = settings

    @property
    def root(self) -> Path:
        """The ``memories`` directory every store lives under."""
        return self._root

    @property
    def isolation(self) -> str:
        """``person`` (a MEMORY.md and USER.md per person) or ``shared`` (one of each for everyone)."""
        return self._settings.isolation

    def location(self, person_id: str | None, target: Target) -> StoreLocation:
        """The store for ``target`` as seen by ``person_id`` (ignored for global and shared stores)."""
        limits = {
            Target.MEMORY: self._settings.memory_char_limit,
            Target.USER: self._settings.user_char_limit,
            Target.GLOBAL: self._settings.global_char_limit,
        }
        name = "USER.md" if target is Target.USER else "MEMORY.md"
        if target is Target.GLOBAL:
            key = f"global/{name}"
        elif self._settings.isolation == "shared":
            key = name
        else:
            key = f"people/{validate_person_id(person_id)}/{name}"
        return StoreLocation(target, self._root / key, limits[target], key)

    def location_of(self, key: str) -> tuple[StoreLocation, str | None] | None:
        """The store ``key`` names and its person (None for global and shared stores), or None when the key
        names no store of this layout (a person's file under ``shared`` isolation, or the reverse)."""
        if key_problem(key) is not None:
            return None
        parts = key.split("/")
        target = Target.USER if parts[-1] == "USER.md" else Target.MEMORY
        if parts[0] == "global":
            return self.location(None, Target.GLOBAL), None
        person = parts[1] if parts[0] == "people" else None
        if (person is None) != (self._settings.isolation == "shared"):
            return None
        return self.location(person, target), person

    def locations(self, person_id: str | None) -> tuple[StoreLocation, ...]:
        """Every store visible to ``person_id``, in prompt order: global, memory, user."""
        return tuple(self.location(person_id, t) for t in (Target.GLOBAL, Target.MEMORY, Target.USER))
