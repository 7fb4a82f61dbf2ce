"""The transcript import port: past conversations from a JSONL file become ended, searchable conversations.

Invariants every backend keeps: an imported conversation keeps its transcript id as its conversation id,
has one segment, is ended with reason ``IMPORTED_END_REASON`` and is attributed to its person (created
when missing); a conversation id already present is skipped, so importing a file twice adds nothing
twice; message text passes the same persistence boundary as live messages (redaction, valid UTF-8);
conversations are written in batches, each batch one transaction, so a crash leaves whole conversations
or none; a malformed line (``gateway.storage.transcripts``) is reported with its number while the rest
imports. New rows reach the search index the way live messages do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

IMPORTED_END_REASON = "imported"


@dataclass(frozen=True, slots=True)
class LineError:
    """A transcript line that was not imported, with its 1-based line number."""

    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What one import did: conversations and messages added, ids skipped as already present, bad lines."""

    conversations: int
    messages: int
    skipped: tuple[str, ...]
    errors: tuple[LineError, ...]


class TranscriptImport(Protocol):
    """Imports transcript files into one storage backend."""

    async def import_path(self, path: Path) -> ImportReport:
        """Import a JSONL file; an OSError from opening or reading it propagates."""
        ...

    async def import_lines(self, lines: Iterable[bytes | str]) -> ImportReport:
        """Import ``lines`` (line 1 first); bad lines are reported in the result, the rest imported."""
        ...
