"""The transcript import format: one conversation per JSON line, parsed into frozen records or refused.

Format: ``{"id", "person", "platform", "title"?, "messages": [{"role": "user"|"assistant", "content",
"author"?, "created_at"?}]}``; ``created_at`` is Unix seconds or an ISO-8601 string (naive = UTC).
Invariant: ``parse_transcript_line`` either returns a complete, valid record or raises
``TranscriptLineError`` naming the first problem; it never raises anything else for any input line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

IMPORT_ROLES = ("user", "assistant")
MAX_ID_CHARS = 200


class TranscriptLineError(ValueError):
    """One line of a transcript file is not a valid conversation; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One message of an imported conversation."""

    role: str
    content: str
    author: str | None = None
    created_at: float | None = None


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """One conversation to import; ``id`` becomes its conversation id."""

    id: str
    person: str
    platform: str
    messages: tuple[ImportedMessage, ...]
    title: str | None = None


def parse_transcript_line(line: str) -> ImportedConversation:
    """Parse one JSON line; raises TranscriptLineError for anything that is not a valid conversation."""
    try:
        raw = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise TranscriptLineError(f"not valid JSON ({exc})") from None
    if not isinstance(raw, Mapping):
        raise TranscriptLineError("expected a JSON object")
    conversation_id = _name(raw, "id")
    if len(conversation_id) > MAX_ID_CHARS:
        raise TranscriptLineError(f"'id' is longer than {MAX_ID_CHARS} characters")
    title = raw.get("title")
    if title is not None and not isinstance(title, str):
        raise TranscriptLineError("'title' must be a string")
    messages = raw.get("messages")
    if not isinstance(messages, list):
        raise TranscriptLineError("'messages' must be a list")
    return ImportedConversation(
        id=conversation_id,
        person=_name(raw, "person"),
        platform=_name(raw, "platform"),
        title=title,
        messages=tuple(_message(item, index) for index, item in enumerate(messages)),
    )


def _name(raw: Mapping[str, object], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise TranscriptLineError(f"'{key}' must be a non-empty string")
    return value.strip()


def _message(raw: object, index: int) -> ImportedMessage:
    where = f"messages[{index}]"
    if not isinstance(raw, Mapping):
        raise TranscriptLineError(f"{where} must be an object")
    role = raw.get("role")
    if role not in IMPORT_ROLES:
        raise TranscriptLineError(f"{where}.role must be 'user' or 'assistant', got {role!r}")
    content = raw.get("content")
    if not isinstance(content, str):
        raise TranscriptLineError(f"{where}.content must be a string")
    author = raw.get("author")
    if author is not None and not isinstance(author, str):
        raise TranscriptLineError(f"{where}.author must be a string")
    return ImportedMessage(str(role), content, author, _timestamp(raw.get("created_at"), where))


def _timestamp(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        if math.isfinite(value) and value >= 0:
            return float(value)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    raise TranscriptLineError(f"{where}.created_at must be Unix seconds or an ISO-8601 date")
