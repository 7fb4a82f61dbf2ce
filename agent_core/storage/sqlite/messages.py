"""Message rows: preparing them at the persistence boundary (secrets redacted, JSON encoded) and reading them.

Invariants: nothing reaches ``messages`` without passing ``prepare`` (so stored content, tool calls,
reasoning and the ``api_content`` sidecar are redacted and valid UTF-8); rows are read back in id order.
That is the port's segment order (``agent_core.storage.messages``): ids are ``INTEGER PRIMARY KEY``
values drawn inside the single writer's transaction, so on SQLite they increase in commit order.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UnknownMessageError, UnknownSegmentError
from ..records import MessageRecord, ModelCall, NewMessage
from ..redaction import redact_secrets
from .conversations import add_usage

MESSAGE_COLUMNS = (
    "id, session_id, conversation_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, "
    "author, platform_message_id, api_content, created_at"
)
_INSERT = (
    "INSERT INTO messages(session_id, conversation_id, role, content, tool_calls, tool_call_id, tool_name, "
    "reasoning, author, platform_message_id, api_content, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A message already redacted and encoded, ready to bind to the INSERT."""

    role: str
    content: str | None
    tool_calls: str | None
    tool_call_id: str | None
    tool_name: str | None
    reasoning: str | None
    author: str | None
    platform_message_id: str | None
    api_content: str | None
    created_at: float

    @property
    def text_bytes(self) -> int:
        return len(self.content.encode("utf-8")) if self.content else 0


def prepare(message: NewMessage, now: float) -> PreparedMessage:
    """Apply the persistence boundary: redact secrets, scrub lone surrogates, encode tool calls as JSON."""
    tool_calls = None
    if message.tool_calls is not None:
        tool_calls = json.dumps([dict(call) for call in message.tool_calls], ensure_ascii=False)
    return PreparedMessage(
        role=message.role,
        content=_clean(message.content),
        tool_calls=_clean(tool_calls),
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        reasoning=_clean(message.reasoning),
        author=message.author,
        platform_message_id=message.platform_message_id,
        api_content=_clean(message.api_content),
        created_at=message.created_at if message.created_at is not None else now,
    )


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot be stored as UTF-8; replace them rather than fail the whole turn.
        text = text.encode("utf-8", "replace").decode("utf-8")
    return redact_secrets(text)


def conversation_of(conn: sqlite3.Connection, session_id: str) -> str | None:
    row = conn.execute("SELECT conversation_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is None else str(row[0])


def insert_messages(
    conn: sqlite3.Connection, session_id: str, conversation_id: str, messages: Sequence[PreparedMessage]
) -> list[int]:
    """Insert ``messages`` in order inside the caller's transaction; return their ids."""
    ids: list[int] = []
    for m in messages:
        cursor = conn.execute(
            _INSERT,
            (
                session_id,
                conversation_id,
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
            ),
        )
        ids.append(int(cursor.lastrowid or 0))
    return ids


def _current_segment(conn: sqlite3.Connection, session_id: str) -> str:
    """``session_id``, or the conversation's tip when a compression ended it while its writer was busy.

    A turn appends to the segment it started on; if a /compress switched that segment meanwhile, what the
    turn writes next belongs after the carried-over messages in the new tip, not in the archived parent.
    """
    row = conn.execute(
        "SELECT s.end_reason, c.tip_session_id FROM sessions s "
        "JOIN conversations c ON c.id = s.conversation_id WHERE s.id = ?",
        (session_id,),
    ).fetchone()
    if row is None or row[0] != "compression":
        return session_id
    return str(row[1])


class MessageAppender:
    """Inserts prepared messages, remembering which conversation each segment belongs to (immutable)."""

    def __init__(self, cache_size: int = 10_000) -> None:
        self._conversation_of: dict[str, str] = {}
        self._cache_size = cache_size

    def append(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        prepared: Sequence[PreparedMessage],
        usage: ModelCall | None = None,
    ) -> list[int]:
        """Insert ``prepared`` into ``session_id`` (or the tip that replaced it) and add ``usage`` to
        ``session_id``'s counters: the step's model call ran on that segment, wherever its rows land."""
        if usage is not None:
            add_usage(conn, session_id, usage)
        session_id = _current_segment(conn, session_id)
        conversation_id = self._conversation_of.get(session_id)
        if conversation_id is None:
            conversation_id = conversation_of(conn, session_id)
            if conversation_id is None:
                raise UnknownSegmentError(session_id)
            if len(self._conversation_of) >= self._cache_size:
                self._conversation_of.clear()
            self._conversation_of[session_id] = conversation_id
        return insert_messages(conn, session_id, conversation_id, prepared)


def set_api_content(conn: sqlite3.Connection, message_id: int, api_content: str | None) -> None:
    """Record the exact bytes sent to the model for a message (already passed through ``_clean``)."""
    cursor = conn.execute("UPDATE messages SET api_content = ? WHERE id = ?", (api_content, message_id))
    if cursor.rowcount == 0:
        raise UnknownMessageError(message_id)


def clean_text(text: str | None) -> str | None:
    """The persistence boundary for a single text: valid UTF-8, secrets redacted."""
    return _clean(text)


def segment_messages(conn: sqlite3.Connection, session_id: str) -> list[MessageRecord]:
    cursor = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = "
        "(SELECT conversation_id FROM sessions WHERE id = ?) AND session_id = ? ORDER BY id",
        (session_id, session_id),
    )
    return [message_from_row(row) for row in cursor.fetchall()]


def conversation_messages(conn: sqlite3.Connection, conversation_id: str) -> list[MessageRecord]:
    cursor = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY id", (conversation_id,)
    )
    return [message_from_row(row) for row in cursor.fetchall()]


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
