"""The PostgreSQL transcript import: ``PgTranscriptImport``, many conversations per transaction.

Invariants (the port's, ``gateway.storage.imports``): an imported conversation keeps its transcript id as
its conversation id, has one segment, is ended with reason ``imported`` and is attributed to its person
(created when missing); a conversation id already present is skipped — decided by the insert itself
(``ON CONFLICT (id) DO NOTHING``), so two hosts importing one file at once still add each conversation
once; message text passes the same persistence boundary as live messages (``messages.prepare``:
redaction, valid UTF-8, no NUL) in a thread before the transaction, overlapping the previous batch's
write; each batch of conversations is one ``run_write``, so a crash leaves whole conversations or none.
A message without its own time gets the server's clock at the batch's write (one instant per batch, as
SQLite stamps one per batch). The search columns are maintained by the insert itself; an import that grew
the table by a tenth or more refreshes the planner's statistics at its end (``refresh_statistics``).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_core.storage.postgres.conversations import insert_segment, new_id
from agent_core.storage.postgres.engine import Conn, PgDatabase
from agent_core.storage.postgres.messages import PreparedMessage, insert_locked, prepare
from agent_core.storage.records import NewMessage, NewSegment, Principal
from gateway.storage.imports import IMPORTED_END_REASON, ImportReport
from gateway.storage.transcript_batches import BatchOutcome, import_in_batches
from gateway.storage.transcripts import ImportedConversation, TranscriptLineError

DEFAULT_BATCH_MESSAGES = 4_000
ANALYZE_MIN_MESSAGES = 1_000
"""An import of at least this many messages refreshes the planner's statistics (``refresh_statistics``)."""

_INSERT_CONVERSATION = (
    "INSERT INTO conversations(id, session_key, person_id, platform, title, created_at, ended_at, "
    "end_reason, tip_segment_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (id) DO NOTHING RETURNING id"
)


@dataclass(frozen=True, slots=True)
class PreparedConversation:
    """A parsed conversation whose messages already passed the persistence boundary."""

    conversation: ImportedConversation
    messages: tuple[PreparedMessage, ...]

    @classmethod
    def of(cls, conversation: ImportedConversation) -> PreparedConversation:
        prepared = tuple(
            prepare(
                NewMessage(
                    role=m.role,
                    content=m.content,
                    author=_author(m.author, m.role, conversation.person),
                    created_at=m.created_at,
                )
            )
            for m in conversation.messages
        )
        return cls(conversation, prepared)

    def stamped(self, now: float) -> tuple[PreparedMessage, ...]:
        """The messages with ``now`` as the time of any that came without one."""
        return tuple(
            m if m.created_at is not None else dataclasses.replace(m, created_at=now) for m in self.messages
        )


def _author(author: str | None, role: str, person: str) -> str | None:
    """A user message without an author was said by the conversation's person (NUL cannot be stored)."""
    if author:
        return author.replace("\x00", "") or None
    return person if role == "user" else None


async def insert_conversations(conn: Conn, batch: Sequence[PreparedConversation]) -> BatchOutcome:
    """Insert every conversation of ``batch`` whose id is new; call inside one write transaction."""
    row = await (await conn.execute("SELECT mg_now()")).fetchone()
    now = float(row[0]) if row is not None else time.time()
    added = messages = 0
    skipped: list[str] = []
    for item in batch:
        if await _insert_one(conn, item, now):
            added += 1
            messages += len(item.messages)
        else:
            skipped.append(item.conversation.id)
    return BatchOutcome(added, messages, tuple(skipped))


async def _insert_one(conn: Conn, item: PreparedConversation, now: float) -> bool:
    """Write one conversation, its segment and its messages; False when its id was already taken."""
    conversation = item.conversation
    stamped = item.stamped(now)
    times = [m.created_at for m in stamped if m.created_at is not None]
    started = min(times, default=now)
    ended = max(times, default=now)
    segment_id = new_id("sg")
    session_key = f"import:{conversation.platform}:{conversation.id}"
    inserted = await conn.execute(
        _INSERT_CONVERSATION,
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
    if await inserted.fetchone() is None:
        return False
    await conn.execute(
        "INSERT INTO persons(id, display_name, created_at) VALUES (%s, NULL, mg_now()) "
        "ON CONFLICT (id) DO NOTHING",
        (conversation.person,),
    )
    await insert_segment(
        conn,
        segment_id=segment_id,
        conversation_id=conversation.id,
        parent_session_id=None,
        session_key=session_key,
        principal=Principal(person_id=conversation.person, platform=conversation.platform),
        spec=NewSegment(title=conversation.title),
    )
    await conn.execute(
        "UPDATE segments SET started_at = %s, ended_at = %s, end_reason = %s WHERE id = %s",
        (started, ended, IMPORTED_END_REASON, segment_id),
    )
    # The segment was created by this transaction, so no other one can hold or redirect it.
    await insert_locked(conn, segment_id, conversation.id, stamped)
    return True


def storable(conversation: ImportedConversation) -> ImportedConversation:
    """``conversation`` as PostgreSQL can store it (no NUL in text: a title loses it, a name is refused)."""
    names = (("id", conversation.id), ("person", conversation.person), ("platform", conversation.platform))
    for field, value in names:
        if "\x00" in value:
            raise TranscriptLineError(f"'{field}' contains a NUL character, which PostgreSQL cannot store")
    if conversation.title is not None and "\x00" in conversation.title:
        return dataclasses.replace(conversation, title=conversation.title.replace("\x00", ""))
    return conversation


class PgTranscriptImport:
    """``TranscriptImport`` into PostgreSQL, ``batch_messages`` messages per write transaction."""

    def __init__(self, db: PgDatabase, *, batch_messages: int = DEFAULT_BATCH_MESSAGES) -> None:
        if batch_messages < 1:
            raise ValueError("batch_messages must be at least 1")
        self._db = db
        self._batch_messages = batch_messages

    async def import_path(self, path: Path) -> ImportReport:
        """Import a JSONL file (an OSError from opening or reading it propagates)."""
        with path.open("rb") as handle:
            return await self.import_lines(handle)

    async def import_lines(self, lines: Iterable[bytes | str]) -> ImportReport:
        """Import ``lines`` (line 1 first); bad lines are reported in the result, the rest imported."""

        async def write(items: list[PreparedConversation]) -> BatchOutcome:
            return await self._db.run_write(functools.partial(insert_conversations, batch=items))

        report = await import_in_batches(
            lines,
            batch_messages=self._batch_messages,
            prepare=lambda conversation: PreparedConversation.of(storable(conversation)),
            write=write,
        )
        await self._db.run_write(functools.partial(refresh_statistics, imported=report.messages))
        return report


async def refresh_statistics(conn: Conn, *, imported: int) -> bool:
    """``ANALYZE`` the tables an import grew when it brought at least ``ANALYZE_MIN_MESSAGES`` messages and
    a tenth of all messages (autovacuum's own rule, applied at once); True if it did.

    Search plans by these statistics (how many messages a term matches decides between walking the newest
    messages and reading the index's matches, and index scans over sequential ones); right after a bulk
    import they would otherwise describe the table before it (or nothing, on a new database) until
    autovacuum gets to it — a minute at best, never where autovacuum is off.
    """
    if imported < ANALYZE_MIN_MESSAGES:
        return False
    row = await (await conn.execute("SELECT coalesce(max(id), 0) FROM messages")).fetchone()
    if row is not None and imported * 10 < int(row[0]):
        return False
    await conn.execute("ANALYZE messages, segments, conversations")
    return True
