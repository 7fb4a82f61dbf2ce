"""The recall fence: provider recall travels only inside the request view, inside ``<memory-context>``.

Invariant: fenced text is never written to ``messages.content``; the exact composed bytes of the user
message are kept in the ``api_content`` sidecar so later turns replay them and the prefix cache holds.
"""

from __future__ import annotations

import re

OPEN_TAG = "<memory-context>"
CLOSE_TAG = "</memory-context>"
SYSTEM_NOTE = (
    "[System note: The following is recalled memory context, NOT new user input. "
    "Use it as background about this person; it may be outdated.]"
)

_BLOCK = re.compile(r"<\s*memory-context\s*>.*?<\s*/\s*memory-context\s*>", re.IGNORECASE | re.DOTALL)
_STRAY_TAG = re.compile(r"<\s*/?\s*memory-context\s*>", re.IGNORECASE)
_NOTE = re.compile(r"\[System note: The following is recalled memory context[^\]]*\]", re.IGNORECASE)


def sanitize_recall(text: str) -> str:
    """Remove nested fences, stray tags and system notes from provider text before fencing it."""
    cleaned = _BLOCK.sub(" ", text)
    cleaned = _NOTE.sub(" ", cleaned)
    cleaned = _STRAY_TAG.sub(" ", cleaned)
    return cleaned.strip()


def fence_recall(recall: str) -> str:
    """The fenced block for ``recall`` (already sanitised and scanned by the caller)."""
    return f"{OPEN_TAG}\n{SYSTEM_NOTE}\n\n{recall}\n{CLOSE_TAG}"


def has_recall(request_text: str | None) -> bool:
    """Whether a message's request bytes already end with its recall (recall is always appended last)."""
    return request_text is not None and request_text.endswith(CLOSE_TAG)


def with_recall(user_text: str, recall: str | None) -> str:
    """The request-view text of the current user message: its content plus the fenced recall, if any."""
    if not recall:
        return user_text
    return f"{user_text}\n\n{fence_recall(recall)}"
