"""The SQLite outbox: every SQL statement over ``outbox`` and ``outbox_chunks``, and ``SqliteOutbox``.

Invariants (the port's, ``gateway.storage.outbox``): ``idempotency_key`` is UNIQUE, so queuing the same
reply twice adds nothing; rows of one chat are delivered strictly in id order — only the oldest undelivered
row of a chat can be claimed, and ids follow commit order because SQLite serialises every writer; a claim
expires, so a row held by a dead delivery process is claimed again and resumes at its first chunk without
a recorded platform message id. Only delivered rows (``sent``) are ever deleted, by ``prune_delivered``,
with their chunk progress; pending, sending and failed rows stay until delivered. The functions run on a
connection so the queue (``jobs.py``) can add a reply inside its own job-completion transaction.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import cast

from agent_core.storage.sqlite import StateStore
from gateway.storage.outbox import (
    NOTICE_KINDS,
    ChatNotice,
    ChunkReceipt,
    OutboxEntry,
    OutboxItem,
    OutboxState,
    OutboxStatus,
    ReplyRouting,
)

__all__ = [
    "NOTICE_KINDS",
    "ChatNotice",
    "OutboxItem",
    "OutboxStatus",
    "SqliteOutbox",
    "add_outbox",
    "chat_notices",
    "claim_outbox",
    "conversation_outbox",
    "has_claimable",
    "is_message_queued",
    "mark_failed",
    "mark_sent",
    "note_attempt",
    "prune_delivered",
    "record_chunk",
    "release_claims",
    "release_others",
]

_IDS_PER_STATEMENT = 500
_COLUMNS = "id, conversation_id, platform, chat_ref, kind, text, reply_to, attempts, idempotency_key"


def add_outbox(
    conn: sqlite3.Connection,
    *,
    conversation_id: str,
    platform: str,
    chat_ref: str,
    text: str,
    idempotency_key: str,
    kind: str,
    now: float,
    job_id: int | None = None,
    message_id: int | None = None,
    reply_to: str | None = None,
    request_text: str | None = None,
) -> bool:
    """Queue one delivery inside the caller's transaction; False when the key was already queued."""
    cursor = conn.execute(
        "INSERT OR IGNORE INTO outbox(conversation_id, chat_ref, idempotency_key, text, created_at, "
        "platform, kind, job_id, message_id, reply_to, request_text) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            conversation_id,
            chat_ref,
            idempotency_key,
            text,
            now,
            platform,
            kind,
            job_id,
            message_id,
            reply_to,
            request_text,
        ),
    )
    return cursor.rowcount == 1


_ROUTED = (
    "(o.platform NOT IN (SELECT value FROM json_each(:routed)) OR o.reply_to IS NULL "
    "OR o.reply_to IN (SELECT value FROM json_each(:awaited)) OR o.created_at <= :now - :grace_s)"
)
"""A row ``ReplyRouting`` gives this claimer now (no routing: every row)."""


def _routing_params(routing: ReplyRouting | None) -> dict[str, object]:
    if routing is None:
        return {"routed": "[]", "awaited": "[]", "grace_s": 0.0}
    return {
        "routed": json.dumps(sorted(routing.platforms)),
        "awaited": json.dumps(sorted(routing.awaited)),
        "grace_s": routing.grace_s,
    }


def has_claimable(
    conn: sqlite3.Connection, platforms: Sequence[str], now: float, routing: ReplyRouting | None = None
) -> bool:
    """A cheap read so idle delivery loops do not take the write lock just to find nothing."""
    row = conn.execute(
        "SELECT 1 FROM outbox o WHERE o.platform IN (SELECT value FROM json_each(:platforms)) "
        f"AND (o.state = 'pending' OR (o.state = 'sending' AND o.claim_expires_at < :now)) AND {_ROUTED} "
        "LIMIT 1",
        {"platforms": json.dumps(list(platforms)), "now": now, **_routing_params(routing)},
    ).fetchone()
    return row is not None


def claim_outbox(
    conn: sqlite3.Connection,
    platforms: Sequence[str],
    holder: str,
    *,
    now: float,
    claim_s: float,
    limit: int,
    routing: ReplyRouting | None = None,
) -> list[OutboxItem]:
    """Claim up to ``limit`` rows, each the oldest undelivered row of its chat (and routed here now)."""
    if not platforms or limit <= 0:
        return []
    ids = [
        int(row[0])
        for row in conn.execute(
            "SELECT o.id FROM outbox o WHERE o.platform IN (SELECT value FROM json_each(:platforms)) "
            "AND (o.state = 'pending' OR (o.state = 'sending' AND o.claim_expires_at < :now)) "
            "AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.chat_ref = o.chat_ref "
            f"AND p.state IN ('pending', 'sending') AND p.id < o.id) AND {_ROUTED} "
            "ORDER BY o.id LIMIT :limit",
            {
                "platforms": json.dumps(list(platforms)),
                "now": now,
                "limit": limit,
                **_routing_params(routing),
            },
        )
    ]
    items = []
    for outbox_id in ids:
        conn.execute(
            "UPDATE outbox SET state = 'sending', claimed_by = ?, claim_expires_at = ? WHERE id = ?",
            (holder, now + claim_s, outbox_id),
        )
        row = conn.execute(f"SELECT {_COLUMNS} FROM outbox WHERE id = ?", (outbox_id,)).fetchone()
        sent = conn.execute("SELECT chunk_index FROM outbox_chunks WHERE outbox_id = ?", (outbox_id,))
        items.append(
            OutboxItem(
                id=int(row[0]),
                conversation_id=str(row[1]),
                platform=str(row[2]),
                chat_ref=str(row[3]),
                kind=str(row[4]),
                text=str(row[5]),
                reply_to=row[6],
                attempts=int(row[7]),
                idempotency_key=str(row[8]),
                sent_chunks=frozenset(int(r[0]) for r in sent),
            )
        )
    return items


def record_chunk(
    conn: sqlite3.Connection, outbox_id: int, chunk_index: int, platform_message_id: str, now: float
) -> None:
    """Remember that one chunk reached the platform (before the next chunk is sent)."""
    conn.execute(
        "INSERT OR REPLACE INTO outbox_chunks(outbox_id, chunk_index, platform_message_id, sent_at) "
        "VALUES (?, ?, ?, ?)",
        (outbox_id, chunk_index, platform_message_id, now),
    )


def mark_sent(conn: sqlite3.Connection, outbox_id: int, now: float) -> None:
    """Mark the row delivered with its first chunk's platform message id; its claim ends."""
    first = conn.execute(
        "SELECT platform_message_id FROM outbox_chunks WHERE outbox_id = ? ORDER BY chunk_index LIMIT 1",
        (outbox_id,),
    ).fetchone()
    conn.execute(
        "UPDATE outbox SET state = 'sent', sent_at = ?, platform_message_id = ?, claimed_by = NULL, "
        "claim_expires_at = NULL WHERE id = ?",
        (now, None if first is None else first[0], outbox_id),
    )


def note_attempt(conn: sqlite3.Connection, outbox_id: int, error: str, *, now: float, claim_s: float) -> int:
    """Count a failed attempt and extend the claim over the coming wait; returns the attempt count."""
    conn.execute(
        "UPDATE outbox SET attempts = attempts + 1, error = ?, claim_expires_at = ? WHERE id = ?",
        (error, now + claim_s, outbox_id),
    )
    row = conn.execute("SELECT attempts FROM outbox WHERE id = ?", (outbox_id,)).fetchone()
    return int(row[0]) if row is not None else 0


def mark_failed(conn: sqlite3.Connection, outbox_id: int, error: str) -> None:
    conn.execute(
        "UPDATE outbox SET state = 'failed', error = ?, claimed_by = NULL, claim_expires_at = NULL "
        "WHERE id = ?",
        (error, outbox_id),
    )


def release_others(conn: sqlite3.Connection, platforms: Sequence[str], holder: str) -> int:
    cursor = conn.execute(
        "UPDATE outbox SET state = 'pending', claimed_by = NULL, claim_expires_at = NULL "
        "WHERE state = 'sending' AND platform IN (SELECT value FROM json_each(?)) AND claimed_by IS NOT ?",
        (json.dumps(list(platforms)), holder),
    )
    return cursor.rowcount


def release_claims(conn: sqlite3.Connection, holder: str) -> int:
    """Hand this holder's unfinished rows back (clean shutdown); returns how many."""
    cursor = conn.execute(
        "UPDATE outbox SET state = 'pending', claimed_by = NULL, claim_expires_at = NULL "
        "WHERE state = 'sending' AND claimed_by = ?",
        (holder,),
    )
    return cursor.rowcount


def prune_delivered(conn: sqlite3.Connection, *, sent_before: float, limit: int) -> int:
    """Delete up to ``limit`` rows delivered before ``sent_before`` (oldest first); returns how many.

    Recovery stays exact: a reply's row is written in the transaction that finishes its job, so the job
    of a pruned row is done and never recovered; ``is_message_queued`` only decides for replies that were
    stored but never queued, which have no row to prune. The inbound ledger (kept) stops a re-delivered
    event from queuing its reply again once the row is gone.
    """
    ids = [
        int(row[0])
        for row in conn.execute(
            # Without statistics the planner would scan every delivered row via outbox_pending and sort.
            "SELECT id FROM outbox INDEXED BY outbox_sent_at WHERE state = 'sent' AND sent_at < ? "
            "ORDER BY sent_at LIMIT ?",
            (sent_before, limit),
        )
    ]
    for start in range(0, len(ids), _IDS_PER_STATEMENT):
        part = ids[start : start + _IDS_PER_STATEMENT]
        marks = ",".join("?" * len(part))
        conn.execute(f"DELETE FROM outbox_chunks WHERE outbox_id IN ({marks})", part)
        conn.execute(f"DELETE FROM outbox WHERE id IN ({marks}) AND state = 'sent'", part)
    return len(ids)


def is_message_queued(conn: sqlite3.Connection, message_id: int) -> bool:
    """Whether an assistant message already has an outbox row (so recovery never sends it twice)."""
    row = conn.execute("SELECT 1 FROM outbox WHERE message_id = ? LIMIT 1", (message_id,)).fetchone()
    return row is not None


def conversation_outbox(conn: sqlite3.Connection, conversation_id: str) -> list[OutboxStatus]:
    rows = conn.execute(
        "SELECT o.id, o.kind, o.text, o.state, o.attempts, o.error, "
        "(SELECT count(*) FROM outbox_chunks c WHERE c.outbox_id = o.id) "
        "FROM outbox o WHERE o.conversation_id = ? ORDER BY o.id",
        (conversation_id,),
    ).fetchall()
    return [
        OutboxStatus(int(r[0]), str(r[1]), str(r[2]), cast(OutboxState, r[3]), int(r[4]), r[5], int(r[6]))
        for r in rows
    ]


def chat_notices(
    conn: sqlite3.Connection, chat_ref: str, *, since: float, limit: int = 200
) -> tuple[ChatNotice, ...]:
    """The newest ``limit`` command replies and notices for ``chat_ref`` queued at or after ``since``."""
    marks = ", ".join("?" for _ in NOTICE_KINDS)
    rows = conn.execute(
        f"""SELECT id, text, created_at FROM outbox
            WHERE chat_ref = ? AND created_at >= ? AND kind IN ({marks}) ORDER BY id DESC LIMIT ?""",
        (chat_ref, since, *NOTICE_KINDS, limit),
    ).fetchall()
    return tuple(ChatNotice(int(row[0]), str(row[1]), float(row[2])) for row in reversed(rows))


class SqliteOutbox:
    """``OutboxRepository`` over state.db; each method is one read or one write transaction.

    ``clock`` stamps rows and claims (epoch seconds); tests pin it, nothing else should.
    """

    def __init__(self, state: StateStore, *, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock

    async def add(self, entry: OutboxEntry) -> bool:
        now = self._clock()
        return await self._state.run_write(
            lambda c: add_outbox(
                c,
                conversation_id=entry.conversation_id,
                platform=entry.platform,
                chat_ref=entry.chat_ref,
                text=entry.text,
                idempotency_key=entry.idempotency_key,
                kind=entry.kind,
                now=now,
                job_id=entry.job_id,
                message_id=entry.message_id,
                reply_to=entry.reply_to,
                request_text=entry.request_text,
            )
        )

    async def claim(
        self,
        platforms: Sequence[str],
        holder: str,
        *,
        claim_s: float,
        limit: int,
        expect_work: bool = False,
        routing: ReplyRouting | None = None,
    ) -> list[OutboxItem]:
        """A reader looks first, so an idle delivery loop never takes the write lock to find nothing;
        a loop told of a row just queued goes straight to the write (the look would find it anyway)."""
        if not platforms or limit <= 0:
            return []
        if not expect_work and not await self._state.run_read(
            lambda c: has_claimable(c, platforms, self._clock(), routing)
        ):
            return []
        return await self._state.run_write(
            lambda c: claim_outbox(
                c, platforms, holder, now=self._clock(), claim_s=claim_s, limit=limit, routing=routing
            )
        )

    async def record_chunk(self, outbox_id: int, receipt: ChunkReceipt) -> None:
        now = self._clock()
        await self._state.run_write(
            lambda c: record_chunk(c, outbox_id, receipt.index, receipt.platform_message_id, now)
        )

    async def mark_sent(self, outbox_id: int, last: ChunkReceipt | None = None) -> None:
        now = self._clock()

        def finish(conn: sqlite3.Connection) -> None:
            if last is not None:
                record_chunk(conn, outbox_id, last.index, last.platform_message_id, now)
            mark_sent(conn, outbox_id, now)

        await self._state.run_write(finish)

    async def note_attempt(self, outbox_id: int, error: str, *, claim_s: float) -> int:
        return await self._state.run_write(
            lambda c: note_attempt(c, outbox_id, error, now=self._clock(), claim_s=claim_s)
        )

    async def mark_failed(self, outbox_id: int, error: str) -> None:
        await self._state.run_write(lambda c: mark_failed(c, outbox_id, error))

    async def release_claims(self, holder: str) -> int:
        return await self._state.run_write(lambda c: release_claims(c, holder))

    async def release_others(self, platforms: Sequence[str], holder: str) -> int:
        return await self._state.run_write(lambda c: release_others(c, platforms, holder))

    async def prune_delivered(self, *, older_than_s: float, limit: int) -> int:
        sent_before = self._clock() - older_than_s
        return await self._state.run_write(lambda c: prune_delivered(c, sent_before=sent_before, limit=limit))

    async def is_message_queued(self, message_id: int) -> bool:
        return await self._state.run_read(lambda c: is_message_queued(c, message_id))

    async def for_conversation(self, conversation_id: str) -> list[OutboxStatus]:
        return await self._state.run_read(lambda c: conversation_outbox(c, conversation_id))

    async def chat_notices(self, chat_ref: str, *, since: float, limit: int = 200) -> tuple[ChatNotice, ...]:
        return await self._state.run_read(lambda c: chat_notices(c, chat_ref, since=since, limit=limit))
