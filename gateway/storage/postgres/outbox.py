"""The PostgreSQL outbox: every SQL statement over ``outbox`` and ``outbox_chunks``, and ``PgOutbox``.

Invariants (the port's, ``gateway.storage.outbox``), kept with several hosts queuing and claiming at once:

- ``idempotency_key`` is UNIQUE (``ON CONFLICT DO NOTHING``), so queuing the same reply twice adds nothing.
- A chat's ids follow commit order: ``add_outbox`` takes ``pg_advisory_xact_lock(OUTBOX_CHAT_LOCK,
  hashtext(chat_ref))`` before its INSERT draws an id, and holds it until the caller's transaction ends, so
  a later row of a chat can neither draw a smaller id nor become visible before an earlier one (a hash
  collision only serialises two chats' queuing, never reorders anything).
- Only a chat's oldest undelivered (pending or sending) row is claimable, and a claim is one statement that
  locks its rows ``FOR UPDATE SKIP LOCKED``: two hosts never claim one row, and a row one host claimed and
  committed fails the other's re-check (``sending`` with a live claim). A chat's later row is not claimable
  while an earlier one is pending or sending in any snapshot that could see the later one, so a chat has at
  most one row in flight cluster-wide; rows never return to pending from ``sent``/``failed``, so a stale
  snapshot can only hide a claimable row, never offer one out of order. A delivery thus happens once across
  hosts and a chat's rows go out one after another, never two at once (the token budget itself lives in
  each host's delivery loop: exact while one host delivers a platform, as its adapter's lease owner does).
- Claims expire on ``mg_now()`` (the server's clock), so a row held by a dead host is claimed again and
  resumes at its first unrecorded chunk. Only ``sent`` rows are deleted, by ``prune_delivered``, with their
  chunks.
- Queuing a row (and handing rows back) sends ``pg_notify('mnemogate_outbox', '')`` in the same
  transaction, so listeners on every host wake when it commits.

The module-level functions take a connection so the queue can queue a reply inside its own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import LiteralString, cast

from agent_core.storage.postgres.engine import Conn, PgDatabase
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
    "OUTBOX_CHANNEL",
    "OUTBOX_CHAT_LOCK",
    "PgOutbox",
    "add_outbox",
    "chat_notices",
    "claim_outbox",
    "conversation_outbox",
    "is_message_queued",
    "mark_sent",
    "record_chunk",
]

OUTBOX_CHANNEL = "mnemogate_outbox"
"""The LISTEN/NOTIFY channel told when outbox rows become claimable (payload empty)."""

OUTBOX_CHAT_LOCK = 0x6F757462  # "outb": the advisory-lock class of per-chat outbox queuing


async def add_outbox(
    conn: Conn,
    *,
    conversation_id: str,
    platform: str,
    chat_ref: str,
    text: str,
    idempotency_key: str,
    kind: str,
    job_id: int | None = None,
    message_id: int | None = None,
    reply_to: str | None = None,
    request_text: str | None = None,
) -> bool:
    """Queue one delivery inside the caller's transaction; False when the key was already queued.

    Takes the chat's queuing lock (held to the caller's commit) before the row draws its id."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(%s::integer, hashtext(%s))", (OUTBOX_CHAT_LOCK, chat_ref)
    )
    cursor = await conn.execute(
        "INSERT INTO outbox(conversation_id, chat_ref, idempotency_key, text, created_at, platform, kind, "
        "job_id, message_id, reply_to, request_text) "
        "VALUES (%s, %s, %s, %s, mg_now(), %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (idempotency_key) DO NOTHING RETURNING id",
        (
            conversation_id,
            chat_ref,
            idempotency_key,
            text,
            platform,
            kind,
            job_id,
            message_id,
            reply_to,
            request_text,
        ),
    )
    if await cursor.fetchone() is None:
        return False
    await _notify(conn)
    return True


async def _notify(conn: Conn) -> None:
    await conn.execute("SELECT pg_notify(%s, '')", (OUTBOX_CHANNEL,))


_ROUTED: LiteralString = (
    "(NOT (o.platform = ANY(%(routed)s)) OR o.reply_to IS NULL OR o.reply_to = ANY(%(awaited)s) "
    "OR o.created_at <= mg_now() - %(grace_s)s)"
)
"""A row ``ReplyRouting`` gives this claimer now (no routing: every row)."""


def _routing_params(routing: ReplyRouting | None) -> dict[str, object]:
    if routing is None:
        return {"routed": [], "awaited": [], "grace_s": 0.0}
    return {
        "routed": sorted(routing.platforms),
        "awaited": sorted(routing.awaited),
        "grace_s": routing.grace_s,
    }


async def has_claimable(conn: Conn, platforms: Sequence[str], routing: ReplyRouting | None = None) -> bool:
    """A cheap look (no locks) so an idle delivery loop spends one round trip to find nothing."""
    cursor = await conn.execute(
        "SELECT 1 FROM outbox o WHERE o.platform = ANY(%(platforms)s) AND (o.state = 'pending' OR "
        "(o.state = 'sending' AND o.claim_expires_at < mg_now())) AND " + _ROUTED + " LIMIT 1",
        {"platforms": list(platforms), **_routing_params(routing)},
    )
    return await cursor.fetchone() is not None


async def claim_outbox(
    conn: Conn,
    platforms: Sequence[str],
    holder: str,
    *,
    claim_s: float,
    limit: int,
    routing: ReplyRouting | None = None,
) -> list[OutboxItem]:
    """Claim up to ``limit`` rows, each the oldest undelivered row of its chat, in one statement."""
    if not platforms or limit <= 0:
        return []
    cursor = await conn.execute(
        """WITH clock AS MATERIALIZED (SELECT mg_now() AS now),
            picked AS (
                SELECT o.id FROM outbox o, clock
                WHERE o.platform = ANY(%(platforms)s)
                  AND (o.state = 'pending' OR (o.state = 'sending' AND o.claim_expires_at < clock.now))
                  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.chat_ref = o.chat_ref
                                  AND p.state IN ('pending', 'sending') AND p.id < o.id)
                  AND """
        + _ROUTED
        + """
                ORDER BY o.id LIMIT %(limit)s
                FOR UPDATE OF o SKIP LOCKED)
        UPDATE outbox o SET state = 'sending', claimed_by = %(holder)s,
            claim_expires_at = clock.now + %(claim_s)s
        FROM picked, clock WHERE o.id = picked.id
        RETURNING o.id, o.conversation_id, o.platform, o.chat_ref, o.kind, o.text, o.reply_to, o.attempts,
            o.idempotency_key,
            ARRAY(SELECT c.chunk_index FROM outbox_chunks c WHERE c.outbox_id = o.id)""",
        {
            "platforms": list(platforms),
            "limit": limit,
            "holder": holder,
            "claim_s": claim_s,
            **_routing_params(routing),
        },
    )
    items = [
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
            sent_chunks=frozenset(int(index) for index in row[9]),
        )
        for row in await cursor.fetchall()
    ]
    return sorted(items, key=lambda item: item.id)


async def record_chunk(conn: Conn, outbox_id: int, receipt: ChunkReceipt) -> None:
    """Remember that one chunk reached the platform (before the next chunk is sent)."""
    await conn.execute(
        "INSERT INTO outbox_chunks(outbox_id, chunk_index, platform_message_id, sent_at) "
        "VALUES (%s, %s, %s, mg_now()) ON CONFLICT (outbox_id, chunk_index) DO UPDATE SET "
        "platform_message_id = excluded.platform_message_id, sent_at = excluded.sent_at",
        (outbox_id, receipt.index, receipt.platform_message_id),
    )


async def mark_sent(conn: Conn, outbox_id: int) -> None:
    """Mark the row delivered with its first chunk's platform message id; its claim ends."""
    await conn.execute(
        "UPDATE outbox SET state = 'sent', sent_at = mg_now(), claimed_by = NULL, claim_expires_at = NULL, "
        "platform_message_id = (SELECT c.platform_message_id FROM outbox_chunks c WHERE c.outbox_id = %s "
        "ORDER BY c.chunk_index LIMIT 1) WHERE id = %s",
        (outbox_id, outbox_id),
    )


async def is_message_queued(conn: Conn, message_id: int) -> bool:
    """Whether an assistant message already has an outbox row (so recovery never sends it twice)."""
    cursor = await conn.execute("SELECT 1 FROM outbox WHERE message_id = %s LIMIT 1", (message_id,))
    return await cursor.fetchone() is not None


async def _note_attempt(conn: Conn, outbox_id: int, error: str, claim_s: float) -> int:
    cursor = await conn.execute(
        "UPDATE outbox SET attempts = attempts + 1, error = %s, claim_expires_at = mg_now() + %s "
        "WHERE id = %s RETURNING attempts",
        (error, claim_s, outbox_id),
    )
    row = await cursor.fetchone()
    return int(row[0]) if row is not None else 0


async def _mark_failed(conn: Conn, outbox_id: int, error: str) -> None:
    await conn.execute(
        "UPDATE outbox SET state = 'failed', error = %s, claimed_by = NULL, claim_expires_at = NULL "
        "WHERE id = %s",
        (error, outbox_id),
    )


async def _release_others(conn: Conn, platforms: Sequence[str], holder: str) -> int:
    cursor = await conn.execute(
        "UPDATE outbox SET state = 'pending', claimed_by = NULL, claim_expires_at = NULL "
        "WHERE state = 'sending' AND platform = ANY(%s) AND claimed_by IS DISTINCT FROM %s",
        (list(platforms), holder),
    )
    if cursor.rowcount > 0:
        await _notify(conn)
    return cursor.rowcount


async def _release_claims(conn: Conn, holder: str) -> int:
    cursor = await conn.execute(
        "UPDATE outbox SET state = 'pending', claimed_by = NULL, claim_expires_at = NULL "
        "WHERE state = 'sending' AND claimed_by = %s",
        (holder,),
    )
    if cursor.rowcount > 0:
        await _notify(conn)
    return cursor.rowcount


async def _prune_delivered(conn: Conn, older_than_s: float, limit: int) -> int:
    """Delete up to ``limit`` delivered rows older than ``older_than_s`` (oldest first), with their chunks.

    Recovery stays exact as on SQLite: a reply's row is written in its job's finishing transaction, so a
    pruned row's job is done; the kept inbound ledger stops a re-delivered event from queuing it again."""
    cursor = await conn.execute(
        """WITH doomed AS (
                SELECT id FROM outbox WHERE state = 'sent' AND sent_at < mg_now() - %s
                ORDER BY sent_at LIMIT %s FOR UPDATE SKIP LOCKED),
            chunks AS (DELETE FROM outbox_chunks WHERE outbox_id IN (SELECT id FROM doomed))
        DELETE FROM outbox WHERE id IN (SELECT id FROM doomed) AND state = 'sent' RETURNING id""",
        (older_than_s, limit),
    )
    return len(await cursor.fetchall())


async def conversation_outbox(conn: Conn, conversation_id: str) -> list[OutboxStatus]:
    cursor = await conn.execute(
        "SELECT o.id, o.kind, o.text, o.state, o.attempts, o.error, "
        "(SELECT count(*) FROM outbox_chunks c WHERE c.outbox_id = o.id) "
        "FROM outbox o WHERE o.conversation_id = %s ORDER BY o.id",
        (conversation_id,),
    )
    return [
        OutboxStatus(int(r[0]), str(r[1]), str(r[2]), cast(OutboxState, r[3]), int(r[4]), r[5], int(r[6]))
        for r in await cursor.fetchall()
    ]


async def chat_notices(
    conn: Conn, chat_ref: str, *, since: float, limit: int = 200
) -> tuple[ChatNotice, ...]:
    """The newest ``limit`` command replies and notices for ``chat_ref`` queued at or after ``since``."""
    cursor = await conn.execute(
        "SELECT id, text, created_at FROM outbox WHERE chat_ref = %s AND created_at >= %s "
        "AND kind = ANY(%s) ORDER BY id DESC LIMIT %s",
        (chat_ref, since, list(NOTICE_KINDS), limit),
    )
    rows = await cursor.fetchall()
    return tuple(ChatNotice(int(row[0]), str(row[1]), float(row[2])) for row in reversed(rows))


class PgOutbox:
    """``OutboxRepository`` on PostgreSQL; each method is one transaction (a look is one statement)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def add(self, entry: OutboxEntry) -> bool:
        async def work(conn: Conn) -> bool:
            return await add_outbox(
                conn,
                conversation_id=entry.conversation_id,
                platform=entry.platform,
                chat_ref=entry.chat_ref,
                text=entry.text,
                idempotency_key=entry.idempotency_key,
                kind=entry.kind,
                job_id=entry.job_id,
                message_id=entry.message_id,
                reply_to=entry.reply_to,
                request_text=entry.request_text,
            )

        return await self._db.run_write(work)

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
        """An idle loop looks first in one autocommit statement (no transaction, no locks); a loop told
        of a row just queued goes straight to the claim (the look would find it anyway)."""
        if not platforms or limit <= 0:
            return []
        if not expect_work and not await self._look(platforms, routing):
            return []
        return await self._db.run_write(
            lambda c: claim_outbox(c, platforms, holder, claim_s=claim_s, limit=limit, routing=routing)
        )

    async def _look(self, platforms: Sequence[str], routing: ReplyRouting | None) -> bool:
        return await self._db.run_autocommit_read(lambda conn: has_claimable(conn, platforms, routing))

    async def record_chunk(self, outbox_id: int, receipt: ChunkReceipt) -> None:
        await self._db.run_write(lambda c: record_chunk(c, outbox_id, receipt))

    async def mark_sent(self, outbox_id: int, last: ChunkReceipt | None = None) -> None:
        async def finish(conn: Conn) -> None:
            if last is not None:
                await record_chunk(conn, outbox_id, last)
            await mark_sent(conn, outbox_id)

        await self._db.run_write(finish)

    async def note_attempt(self, outbox_id: int, error: str, *, claim_s: float) -> int:
        return await self._db.run_write(lambda c: _note_attempt(c, outbox_id, error, claim_s))

    async def mark_failed(self, outbox_id: int, error: str) -> None:
        await self._db.run_write(lambda c: _mark_failed(c, outbox_id, error))

    async def release_claims(self, holder: str) -> int:
        return await self._db.run_write(lambda c: _release_claims(c, holder))

    async def release_others(self, platforms: Sequence[str], holder: str) -> int:
        if not platforms:
            return 0
        return await self._db.run_write(lambda c: _release_others(c, platforms, holder))

    async def prune_delivered(self, *, older_than_s: float, limit: int) -> int:
        if limit <= 0:
            return 0
        return await self._db.run_write(lambda c: _prune_delivered(c, older_than_s, limit))

    async def is_message_queued(self, message_id: int) -> bool:
        return await self._db.run_read(lambda c: is_message_queued(c, message_id))

    async def for_conversation(self, conversation_id: str) -> list[OutboxStatus]:
        return await self._db.run_read(lambda c: conversation_outbox(c, conversation_id))

    async def chat_notices(self, chat_ref: str, *, since: float, limit: int = 200) -> tuple[ChatNotice, ...]:
        return await self._db.run_read(lambda c: chat_notices(c, chat_ref, since=since, limit=limit))
