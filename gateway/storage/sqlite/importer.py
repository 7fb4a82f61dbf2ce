"""The SQLite transcript import: ``SqliteTranscriptImport`` and its SQL, many conversations per transaction.

Invariants (the port's, ``gateway.storage.imports``): an imported conversation keeps its transcript id as
its conversation id, has one segment, is ended with reason ``imported`` and is attributed to its person
(created when missing); a conversation id already present is skipped, so importing a file twice adds
nothing twice; message text passes the same persistence boundary as live messages (``messages.prepare``:
redaction, valid UTF-8) in a thread before the write lock is taken, overlapping the previous batch's
write; each batch of conversations is one write transaction, so a crash leaves whole conversations or
none; new rows reach the search index through the catch-up indexer.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_core.storage.records import NewMessage, NewSegment, Principal
from agent_core.storage.sqlite.conversations import insert_segment, new_id
from agent_core.storage.sqlite.messages import PreparedMessage, insert_messages, prepare
from agent_core.storage.sqlite.store import StateStore
from gateway.storage.imports import IMPORTED_END_REASON, ImportReport
from gateway.storage.transcript_batches import BatchOutcome, import_in_batches
from gateway.storage.transcripts import ImportedConversation

DEFAULT_BATCH_MESSAGES = 4_000


@dataclass(frozen=True, slots=True)
class PreparedConversation:
    """A parsed conversation whose messages already passed the persistence boundary."""

    conversation: ImportedConversation
    messages: tuple[PreparedMessage, ...]

    @classmethod
    def of(cls, conversation: ImportedConversation, now: float) -> PreparedConversation:
        prepared = tuple(
            prepare(
                NewMessage(
                    role=m.role,
                    content=m.content,
                    # A user message without an author was said by the conversation's person.
                    author=m.author if m.author or m.role != "user" else conversation.person,
                    created_at=m.created_at,
                ),
                now,
            )
            for m in conversation.messages
        )
        return cls(conversation, prepared)


def insert_conversations(
    conn: sqlite3.Connection, batch: Sequence[PreparedConversation], now: float
) -> BatchOutcome:
    """Insert every conversation of ``batch`` whose id is new; call inside one write transaction."""
    ids = [item.conversation.id for item in batch]
    present = {
        str(row[0])
        for row in conn.execute(
            "SELECT id FROM conversations WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),)
        )
    }
    added = messages = 0
    skipped: list[str] = []
    for item in batch:
        conversation = item.conversation
        if conversation.id in present:
            skipped.append(conversation.id)
            continue
        present.add(conversation.id)
        _insert_one(conn, item, now)
        added += 1
        messages += len(item.messages)
    return BatchOutcome(added, messages, tuple(skipped))


def _insert_one(conn: sqlite3.Connection, item: PreparedConversation, now: float) -> None:
    conversation = item.conversation
    times = [m.created_at for m in item.messages]
    started = min(times, default=now)
    ended = max(times, default=now)
    conn.execute(
        "INSERT OR IGNORE INTO persons(id, display_name, created_at) VALUES (?, NULL, ?)",
        (conversation.person, now),
    )
    segment_id = new_id("sg")
    session_key = f"import:{conversation.platform}:{conversation.id}"
    conn.execute(
        "INSERT INTO conversations(id, session_key, person_id, platform, title, created_at, ended_at, "
        "end_reason, tip_session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            conversation.id,
            session_key,
            conversation.person,
            conversation.platform,
            conversation.title,
            started,
            ended,
            IMPORTED_END_REASON,
            segment_id,
        ),
    )
    insert_segment(
        conn,
        segment_id=segment_id,
        conversation_id=conversation.id,
        parent_session_id=None,
        session_key=session_key,
        principal=Principal(person_id=conversation.person, platform=conversation.platform),
        spec=NewSegment(title=conversation.title),
        now=started,
    )
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?",
        (ended, IMPORTED_END_REASON, segment_id),
    )
    insert_messages(conn, segment_id, conversation.id, item.messages)


class SqliteTranscriptImport:
    """``TranscriptImport`` into state.db, ``batch_messages`` messages per write transaction."""

    def __init__(self, store: StateStore, *, batch_messages: int = DEFAULT_BATCH_MESSAGES) -> None:
        if batch_messages < 1:
            raise ValueError("batch_messages must be at least 1")
        self._store = store
        self._batch_messages = batch_messages

    async def import_path(self, path: Path) -> ImportReport:
        """Import a JSONL file (an OSError from opening or reading it propagates)."""
        with path.open("rb") as handle:
            return await self.import_lines(handle)

    async def import_lines(self, lines: Iterable[bytes | str]) -> ImportReport:
        """Import ``lines`` (line 1 first); bad lines are reported in the result, the rest imported."""

        async def write(items: list[PreparedConversation]) -> BatchOutcome:
            write = functools.partial(insert_conversations, batch=items, now=time.time())
            return await self._store.run_write(write)

        return await import_in_batches(
            lines,
            batch_messages=self._batch_messages,
            prepare=lambda conversation: PreparedConversation.of(conversation, time.time()),
            write=write,
        )
