"""Exceptions raised by the curated memory store.

Invariant: model-facing problems (bad content, no match, over limit, drift) come back as
``MemoryResult`` errors, never as these; these signal caller bugs or I/O failures.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.storage.documents import DocumentDriftError


class MemoryStoreError(Exception):
    """Base class of every memory store error."""


class InvalidPersonIdError(MemoryStoreError, ValueError):
    """A person id is not a safe single path component (or is missing where one is required)."""


class DelimiterInEntryError(MemoryStoreError, ValueError):
    """An entry contains a line that is exactly the delimiter '§', so it would not round-trip."""


class MemoryFileDriftError(MemoryStoreError, DocumentDriftError):
    """The file on disk was changed outside the store; it was backed up (if possible) and left as is."""

    def __init__(self, path: Path, reason: str, backup: Path | None) -> None:
        self.path = path
        self.backup_path = backup
        super().__init__(path.name, reason, str(backup) if backup is not None else None)


class MemoryIOError(MemoryStoreError):
    """Reading or writing a memory file failed at the OS level; the previous file content is intact."""


class InvalidTargetError(MemoryStoreError, ValueError):
    """A store name other than 'memory', 'user' or 'global'."""
