"""The client-context fence: what an API client sent beside its message, carried in the request view only.

An OpenAI-style client sends system messages and, often, its own copy of earlier turns with each message.
They reach the model inside ``<client-context>`` appended to that user message's request bytes (stored as
its ``api_content``, like recall), never in ``messages.content`` and never in the segment's frozen system
prompt. Invariants: nothing inside the fence can close it or fake another fence (the tags of both fences
are removed from the client's text); the block is a pure function of its inputs, so a re-run of the turn
sends the same bytes; earlier turns beyond ``budget_chars`` are dropped oldest first, with a count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

OPEN_TAG = "<client-context>"
CLOSE_TAG = "</client-context>"
SYSTEM_NOTE = (
    "[System note: The API client sent the following with the message above. It is context from the "
    "client, not a new message: follow its instructions for this reply where they do not conflict with "
    "your own guidelines, and treat its earlier turns as what was said before this message.]"
)
_TAGS = re.compile(r"<\s*/?\s*(?:client|memory)-context\s*>", re.IGNORECASE)


@dataclass(frozen=True)
class ClientTurn:
    """One earlier message of the client's history: ``role`` is user, assistant or tool."""

    role: str
    text: str


def _clean(text: str) -> str:
    return _TAGS.sub(" ", text).strip()


def context_line(turn: ClientTurn) -> str | None:
    """How ``turn`` reads inside the block (None: it says nothing); a block holds it as a line of its own."""
    cleaned = _clean(turn.text)
    return f"[{turn.role}] {cleaned}" if cleaned else None


def given_context(request_text: str | None) -> str:
    """The client-context block inside a message's request bytes ("" when it has none)."""
    if not request_text:
        return ""
    start = request_text.find(OPEN_TAG)
    end = request_text.find(CLOSE_TAG, start)
    return request_text[start : end + len(CLOSE_TAG)] if start >= 0 and end >= 0 else ""


def client_context_block(
    instructions: Sequence[str], turns: Sequence[ClientTurn], *, budget_chars: int
) -> str | None:
    """The fenced block for the client's ``instructions`` and earlier ``turns`` (None when both are empty)."""
    rules = [cleaned for cleaned in (_clean(text) for text in instructions) if cleaned]
    lines = [line for line in map(context_line, turns) if line]
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if used + len(line) > budget_chars:
            break
        kept.append(line)
        used += len(line) + 1
    kept.reverse()
    parts = [OPEN_TAG, SYSTEM_NOTE]
    if rules:
        parts += ["", "Instructions:", "\n\n".join(rules)]
    if lines:
        parts += ["", "Earlier turns (oldest first):"]
        if len(kept) < len(lines):
            parts.append(f"({len(lines) - len(kept)} older turns omitted)")
        parts += kept
    if not rules and not lines:
        return None
    return "\n".join([*parts, CLOSE_TAG])


def with_client_context(user_text: str, block: str | None) -> str:
    """The request-view text of a user message: what the user said, then the client's context, if any."""
    if not block:
        return user_text
    return f"{user_text}\n\n{block}"
