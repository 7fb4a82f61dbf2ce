"""The mapping from python-telegram-bot errors to the gateway's ``SendError`` taxonomy.

Invariants: flood control (429) is retryable with Telegram's ``retry_after`` in seconds; "can't parse
entities" is a ``BadFormatError`` (delivery re-sends plain text); network failures are retryable; every
other rejection is final. Error texts never contain the bot token.
"""

from __future__ import annotations

import datetime as dtm
import warnings

from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.warnings import PTBDeprecationWarning

from gateway.contracts import BadFormatError, SendError

_BAD_FORMAT = ("can't parse entities", "can't find end of the entity", "unsupported start tag")


def retry_after_seconds(error: RetryAfter) -> float:
    with warnings.catch_warnings():
        # PTB 22 warns that the int form will become a timedelta; both are handled here.
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = error.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


def send_error(error: TelegramError, token: str) -> SendError:
    """The ``SendError`` for a failed Bot API call; ``token`` is scrubbed from the message."""
    text = str(error).replace(token, "<token>") if token else str(error)
    lowered = text.lower()
    if isinstance(error, RetryAfter):
        return SendError(text, retryable=True, retry_after=retry_after_seconds(error), kind="rate_limited")
    if isinstance(error, BadRequest):
        if any(marker in lowered for marker in _BAD_FORMAT):
            return BadFormatError(text)
        if "too long" in lowered:
            return SendError(text, retryable=False, kind="too_long")
        if "not found" in lowered:
            return SendError(text, retryable=False, kind="not_found")
        return SendError(text, retryable=False, kind="bad_request")
    if isinstance(error, ChatMigrated):
        return SendError(f"{text} (new chat id {error.new_chat_id})", retryable=False, kind="not_found")
    if isinstance(error, Forbidden):
        return SendError(text, retryable=False, kind="forbidden")
    if isinstance(error, InvalidToken):
        return SendError("telegram rejected the bot token", retryable=False, kind="unauthorized")
    if isinstance(error, TimedOut):
        return SendError(text, retryable=True, kind="timeout")
    if isinstance(error, NetworkError):
        return SendError(text, retryable=True, kind="transient")
    return SendError(text, retryable=False, kind="unknown")
