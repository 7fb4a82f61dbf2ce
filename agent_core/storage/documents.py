"""The curated-document ports: memory documents (one store's ``§`` entries, by location key) and skill texts
(one SKILL.md per skill name), each with a read-modify-write that never loses an update.

Invariants every backend keeps:
- a memory document is named by its key, the path of its file relative to ``memories/`` in the file layout
  (``global/MEMORY.md``, ``people/<person>/MEMORY.md``, ``people/<person>/USER.md``, or ``MEMORY.md`` and
  ``USER.md`` under ``memory.isolation: shared``); any other key is a ``ValueError``, so a key can never
  name a path outside ``memories/``; export writes each document under its key as is;
- ``update`` runs ``apply`` on the latest committed entries while holding that document exclusively (a file
  lock, a row lock) and writes its result before letting go, so two writers on any threads, processes or
  hosts never lose an update; an ``apply`` that raises leaves the document as it was;
- a missing document reads as no entries; a stored text that is not the canonical serialisation of its own
  entries (a hand-edited file) is reported by ``read`` and never overwritten by ``update``
  (``DocumentDriftError``); ``repair`` is the one way to rewrite it;
- skill texts are keyed by the skill's directory name; ``write`` is the same exclusive read-modify-write
  for one skill (so create-if-absent is exact), and a deleted skill stays recoverable by an operator;
- every method blocks (memory code runs in worker threads, the CLI and benchmarks); backends raise
  ``StateUnavailableError`` (or the package's own I/O error) when their storage cannot be reached.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

Entries = tuple[str, ...]
R = TypeVar("R")

PERSON_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@+=-]{0,127}")
"""A person id as it may appear in a key: one safe path component."""
_KEY = re.compile(r"(?:global/MEMORY|MEMORY|USER|people/(?P<person>[^/]+)/(?:MEMORY|USER))\.md")


def key_problem(key: str) -> str | None:
    """Why ``key`` names no memory document, or None when it does."""
    match = _KEY.fullmatch(key)
    if match is None:
        return f"{key!r} is not a memory document (global/MEMORY.md, people/<person>/MEMORY.md or USER.md, …)"
    person = match.group("person")
    if person is not None and not PERSON_ID.fullmatch(person):
        return f"{key!r} names an invalid person id {person!r}"
    return None


def check_key(key: str) -> str:
    """``key`` if it names a memory document; raises ValueError otherwise."""
    problem = key_problem(key)
    if problem is not None:
        raise ValueError(problem)
    return key


@dataclass(frozen=True)
class DocumentContents:
    """What a read found: the parsed entries and why the stored text is not canonical, if it is not."""

    entries: Entries
    problem: str | None


class DocumentDriftError(Exception):
    """The stored text of a document is not canonical (edited by hand), so it was left exactly as it was.

    ``name``: how to call the document in a message; ``backup``: where a copy of the refused text was saved,
    or None when none could be (or the backend keeps none).
    """

    def __init__(self, name: str, reason: str, backup: str | None) -> None:
        self.name = name
        self.reason = reason
        self.backup = backup
        where = backup if backup is not None else "(no copy saved; the stored text is unchanged)"
        super().__init__(f"{name} {reason}; backup: {where}")


class MemoryDocuments(Protocol):
    """Every curated memory document of one deployment (files under one home, or rows of one database)."""

    def read(self, key: str) -> DocumentContents:
        """The document's current entries (none when it does not exist); never raises for a damaged text."""
        ...

    def update(self, key: str, apply: Callable[[Entries], tuple[Entries | None, R]]) -> R:
        """Run ``apply`` on the latest entries, holding the document; store its new entries unless None or
        unchanged; return its outcome. Raises DocumentDriftError when the stored text is not canonical."""
        ...

    def repair(self, key: str) -> tuple[Path | None, Entries]:
        """Rewrite a non-canonical document from the entries salvaged out of it (an operator's action).

        Returns the backup file taken first (None when the text was already canonical, or when the backend
        keeps no files) and the entries stored now.
        """
        ...

    def list_keys(self) -> tuple[str, ...]:
        """The key of every document that exists (possibly empty), sorted."""
        ...

    def forget_person(self, person_id: str) -> int:
        """Delete every document of the person (``people/<person>/…``, with any backup or lock file kept
        beside them); how many documents there were. Shared and global documents are not touched."""
        ...


class SkillTexts(Protocol):
    """The SKILL.md text of every skill of one deployment (a skills folder, or rows of one database)."""

    def names(self) -> tuple[str, ...]:
        """Every stored skill name, sorted (including names a listing must report as invalid)."""
        ...

    def read(self, name: str) -> str | None:
        """The skill's text, None when there is no such skill."""
        ...

    def write(self, name: str, apply: Callable[[str | None], str | None]) -> None:
        """Holding skill ``name`` exclusively, store ``apply(current text or None)`` unless it returns None
        or the same text; an ``apply`` that raises changes nothing."""
        ...

    def delete(self, name: str) -> str | None:
        """Remove the skill, keeping a copy an operator can recover; where it is (None: no such skill)."""
        ...
