"""Message rows on PostgreSQL: preparing them at the persistence boundary and appending and reading them.

Invariants: nothing reaches ``messages`` without passing ``prepare`` (stored content, tool calls, reasoning
and the ``api_content`` sidecar are redacted and valid UTF-8); an append takes its segment's row lock
(``mg_lock_tip``, in the statement that inserts its first row) before it inserts, so the ids of one
segment's messages are drawn, and commit, in the same order (the port's ordering rule,
``agent_core.storage.messages``); an append to a segment that a compression ended goes to the
conversation's tip, after the messages the switch carried over (the switch holds the same lock); rows are
read back in id order within a segment. A message without its own ``created_at`` is stamped with the
server's ``mg_now()``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, LiteralString

from psycopg import errors

from ..errors import UnknownMessageError, UnknownSegmentError
from ..records import MessageRecord, ModelCall, NewMessage
from ..redaction import redact_secrets
from .engine import Conn

MESSAGE_COLUMNS = (
    "id, segment_id, conversation_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, "
    "author, platform_message_id, api_content, created_at"
)
_INSERT = (
    "INSERT INTO messages(segment_id, conversation_id, role, content, tool_calls, tool_call_id, tool_name, "
    "reasoning, author, platform_message_id, api_content, created_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, COALESCE(%s, mg_now())) RETURNING id"
)
# The first row of an append takes the segment's lock (and adds the step's usage) in the same statement
# that inserts it: one round trip for the common one-message append (mg_lock_tip is in APPEND_DDL).
_INSERT_FIRST = (
    "INSERT INTO messages(segment_id, conversation_id, role, content, tool_calls, tool_call_id, tool_name, "
    "reasoning, author, platform_message_id, api_content, created_at) "
    "SELECT t.segment_id, t.conversation_id, %s, %s, %s, %s, %s, %s, %s, %s, %s, COALESCE(%s, mg_now()) "
    "FROM mg_lock_tip(%s, %s, %s, %s, %s, %s, %s, %s) t RETURNING id, segment_id, conversation_id"
)


_CALL_ARGUMENTS: LiteralString = """seg text, add_input bigint, add_output bigint,
            add_cache_read bigint, add_cache_write bigint, add_cost double precision"""


def _lock_tip_function(
    log_usage: LiteralString,
    *,
    arguments: LiteralString = _CALL_ARGUMENTS,
    add_cost: LiteralString = "add_cost",
) -> LiteralString:
    """``mg_lock_tip``: lock a segment's row, or its conversation's tip's when a compression ended it (the
    switch holds the same lock, so the tip read after the lock is the one it committed); ``add_*`` (when
    not NULL) go to ``seg`` itself (the cost as the expression ``add_cost``), and ``log_usage`` runs after
    them. Unqualified names resolve through the session's search_path (the deployment schema)."""
    return (
        """CREATE OR REPLACE FUNCTION mg_lock_tip("""
        + arguments
        + """,
            OUT segment_id text, OUT conversation_id text)
        LANGUAGE plpgsql AS $$
    DECLARE
        reason text;
        tip text;
    BEGIN
        segment_id := seg;
        IF add_input IS NULL THEN
            SELECT s.end_reason, s.conversation_id INTO reason, conversation_id
                FROM segments s WHERE s.id = seg FOR UPDATE;
        ELSE
            UPDATE segments s SET input_tokens = s.input_tokens + add_input,
                output_tokens = s.output_tokens + add_output,
                cache_read_tokens = s.cache_read_tokens + add_cache_read,
                cache_write_tokens = s.cache_write_tokens + add_cache_write, cost_usd = s.cost_usd + """
        + add_cost
        + """
                WHERE s.id = seg RETURNING s.end_reason, s.conversation_id INTO reason, conversation_id;
            IF FOUND THEN
                """
        + log_usage
        + """
            END IF;
        END IF;
        FOR step IN 1..1000 LOOP
            IF NOT FOUND THEN
                RAISE EXCEPTION 'unknown segment %', segment_id USING ERRCODE = 'no_data_found';
            END IF;
            IF reason IS DISTINCT FROM 'compression' THEN
                RETURN;
            END IF;
            SELECT c.tip_segment_id INTO tip FROM conversations c WHERE c.id = conversation_id;
            IF tip IS NULL OR tip = segment_id THEN
                RETURN;
            END IF;
            segment_id := tip;
            SELECT s.end_reason, s.conversation_id INTO reason, conversation_id
                FROM segments s WHERE s.id = segment_id FOR UPDATE;
        END LOOP;
        RAISE EXCEPTION 'segment % is behind too many compressions', seg USING ERRCODE = 'no_data_found';
    END $$"""
    )


APPEND_DDL: tuple[LiteralString, ...] = (_lock_tip_function("NULL;"),)
"""Agent ladder step 1: appends lock their segment in the statement inserting their first row."""

USAGE_LOG_APPEND_DDL: tuple[LiteralString, ...] = (
    _lock_tip_function(
        "INSERT INTO usage_log(at, segment_id, conversation_id, input_tokens, output_tokens,"
        " cache_read_tokens, cache_write_tokens, cost_usd) VALUES (mg_now(), seg, conversation_id,"
        " add_input, add_output, add_cache_read, add_cache_write, add_cost);"
    ),
)
"""Agent ladder step 2: a call's usage is also logged with its time (``usage_log``), in the same statement."""

USAGE_ATTRIBUTION_APPEND_DDL: tuple[LiteralString, ...] = (
    _lock_tip_function(
        "INSERT INTO usage_log(at, segment_id, conversation_id, input_tokens, output_tokens,"
        " cache_read_tokens, cache_write_tokens, cost_usd, model, kind, person_id, platform)"
        " SELECT mg_now(), seg, c.id, add_input, add_output, add_cache_read, add_cache_write, add_cost,"
        " add_model, COALESCE(add_kind, 'turn'), c.person_id, c.platform"
        " FROM conversations c WHERE c.id = mg_lock_tip.conversation_id;",
        arguments=_CALL_ARGUMENTS + ", add_model text, add_kind text",
        add_cost="COALESCE(add_cost, 0)",
    ),
)
"""Agent ladder step 4: the logged call also says which model, why, who (the conversation's person and
platform) and its priced cost (NULL: no price; the segment's counters add only a known cost). It is an
overload (eight arguments): step 2's six-argument function stays, so a host of the previous release still
running during an upgrade keeps appending (its rows log no model, kind ``turn``, no person)."""


@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A message redacted and encoded, ready to bind to the INSERT (``created_at`` None: the server's now)."""

    role: str
    content: str | None
    tool_calls: str | None
    tool_call_id: str | None
    tool_name: str | None
    reasoning: str | None
    author: str | None
    platform_message_id: str | None
    api_content: str | None
    created_at: float | None = None

    @property
    def text_bytes(self) -> int:
        return len(self.content.encode("utf-8")) if self.content else 0


def prepare(message: NewMessage) -> PreparedMessage:
    """Apply the persistence boundary: redact secrets, scrub lone surrogates, encode tool calls as JSON.

    A message's own ``created_at`` (an import) is kept; otherwise the INSERT stamps the server's time.
    """
    tool_calls = None
    if message.tool_calls is not None:
        tool_calls = json.dumps([dict(call) for call in message.tool_calls], ensure_ascii=False)
    return PreparedMessage(
        role=message.role,
        content=clean_text(message.content),
        tool_calls=clean_text(tool_calls),
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        reasoning=clean_text(message.reasoning),
        author=message.author,
        platform_message_id=message.platform_message_id,
        api_content=clean_text(message.api_content),
        created_at=message.created_at,
    )


def clean_text(text: str | None) -> str | None:
    """The persistence boundary for a single text: valid UTF-8, secrets redacted."""
    if text is None:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot be stored as UTF-8; replace them rather than fail the whole turn.
        text = text.encode("utf-8", "replace").decode("utf-8")
    # PostgreSQL text cannot hold NUL (SQLite can): drop it rather than fail the turn.
    return redact_secrets(text.replace("\x00", ""))


def _usage_params(
    usage: ModelCall | None,
) -> tuple[int | None, int | None, int | None, int | None, float | None, str | None, str | None]:
    """The ``add_*`` arguments of ``mg_lock_tip``: NULLs when there is nothing to add or log (a call that
    reported no usage)."""
    if usage is None or usage.spent_nothing:
        return (None, None, None, None, None, None, None)
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.cost_usd,
        usage.model,
        str(usage.kind),
    )


async def insert_messages(
    conn: Conn, segment_id: str, prepared: Sequence[PreparedMessage], usage: ModelCall | None = None
) -> list[int]:
    """Insert ``prepared`` in order into ``segment_id`` (or the tip that replaced it); their ids.

    The first row's statement locks the segment row (``mg_lock_tip``) and adds ``usage`` (the step's model
    call) to ``segment_id`` itself, wherever the rows land, logging it in ``usage_log``. A turn appends to
    the segment it started on; if a compression switched that segment meanwhile, what the turn writes next
    belongs after the carried-over messages in the new tip, not in the archived parent. Call inside the
    caller's write
    transaction: the lock is held to commit, so the ids of one segment are drawn in commit order.
    """
    if not prepared:
        return []
    first, *rest = prepared
    try:
        cursor = await conn.execute(_INSERT_FIRST, (*_values(first), segment_id, *_usage_params(usage)))
    except errors.NoDataFound:
        raise UnknownSegmentError(segment_id) from None
    row = await cursor.fetchone()
    if row is None:
        raise UnknownSegmentError(segment_id)
    return [int(row[0]), *await insert_locked(conn, str(row[1]), str(row[2]), rest)]


def _values(m: PreparedMessage) -> tuple[str | float | None, ...]:
    return (
        m.role,
        m.content,
        m.tool_calls,
        m.tool_call_id,
        m.tool_name,
        m.reasoning,
        m.author,
        m.platform_message_id,
        m.api_content,
        m.created_at,
    )


async def insert_locked(
    conn: Conn, segment_id: str, conversation_id: str, prepared: Sequence[PreparedMessage]
) -> list[int]:
    """Insert into a segment whose row lock this transaction already holds (no redirect); their ids."""
    params = [(segment_id, conversation_id, *_values(m)) for m in prepared]
    if len(params) <= 1:
        rows = [await (await conn.execute(_INSERT, one)).fetchone() for one in params]
        return [int(row[0]) for row in rows if row is not None]
    ids: list[int] = []
    async with conn.cursor() as cursor:  # one pipelined batch, ids read back in the rows' order
        await cursor.executemany(_INSERT, params, returning=True)
        while True:
            row = await cursor.fetchone()
            if row is not None:
                ids.append(int(row[0]))
            if not cursor.nextset():
                break
    return ids


async def set_api_content(conn: Conn, message_id: int, api_content: str | None) -> None:
    """Record the exact bytes sent to the model for a message (already passed through ``clean_text``)."""
    cursor = await conn.execute(
        "UPDATE messages SET api_content = %s WHERE id = %s", (api_content, message_id)
    )
    if cursor.rowcount == 0:
        raise UnknownMessageError(message_id)


async def segment_messages(conn: Conn, segment_id: str) -> list[MessageRecord]:
    cursor = await conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = "
        "(SELECT conversation_id FROM segments WHERE id = %s) AND segment_id = %s ORDER BY id",
        (segment_id, segment_id),
    )
    return [message_from_row(row) for row in await cursor.fetchall()]


async def conversation_messages(conn: Conn, conversation_id: str) -> list[MessageRecord]:
    """Every message of the conversation, oldest segment first, each segment's in its own order."""
    cursor = await conn.execute(
        f"SELECT {', '.join('m.' + c.strip() for c in MESSAGE_COLUMNS.split(','))} "
        "FROM messages m JOIN segments s ON s.id = m.segment_id "
        "WHERE m.conversation_id = %s ORDER BY s.started_at, s.id, m.id",
        (conversation_id,),
    )
    return [message_from_row(row) for row in await cursor.fetchall()]


def message_from_row(row: Sequence[Any]) -> MessageRecord:
    tool_calls = None if row[5] is None else tuple(json.loads(row[5]))
    return MessageRecord(
        id=int(row[0]),
        session_id=str(row[1]),
        conversation_id=str(row[2]),
        role=str(row[3]),
        content=row[4],
        tool_calls=tool_calls,
        tool_call_id=row[6],
        tool_name=row[7],
        reasoning=row[8],
        author=row[9],
        platform_message_id=row[10],
        api_content=row[11],
        created_at=float(row[12]),
    )
