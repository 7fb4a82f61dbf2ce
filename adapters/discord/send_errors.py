"""The mapping from discord.py errors to the gateway's ``SendError`` taxonomy.

Invariants: discord.py's own rate limiter sleeps through short 429s; one it gives up on (``RateLimited``,
or a 429 still answered after its retries) is retryable with the platform's ``retry_after`` in seconds;
server errors and network failures are retryable; every other rejection is final. Discord never rejects
markdown, so there is no ``BadFormatError``. Error texts never contain the bot token.
"""

from __future__ import annotations

import aiohttp
import discord

from gateway.contracts import SendError

_INVALID_FORM_BODY = 50035


def _retry_after(error: discord.HTTPException) -> float | None:
    header = error.response.headers.get("Retry-After") if error.response is not None else None
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None


def send_error(error: Exception, token: str) -> SendError:
    """The ``SendError`` for a failed REST call; ``token`` is scrubbed from the message."""
    text = str(error).replace(token, "<token>") if token else str(error)
    if isinstance(error, discord.RateLimited):
        return SendError(text, retryable=True, retry_after=error.retry_after, kind="rate_limited")
    if isinstance(error, discord.Forbidden):
        return SendError(text, retryable=False, kind="forbidden")
    if isinstance(error, discord.NotFound):
        return SendError(text, retryable=False, kind="not_found")
    if isinstance(error, discord.DiscordServerError):
        return SendError(text, retryable=True, kind="transient")
    if isinstance(error, discord.HTTPException):
        if error.status == 429:
            return SendError(text, retryable=True, retry_after=_retry_after(error), kind="rate_limited")
        if error.code == _INVALID_FORM_BODY and "2000" in text:
            return SendError(text, retryable=False, kind="too_long")
        return SendError(text, retryable=False, kind="bad_request")
    if isinstance(error, aiohttp.ClientError | OSError | TimeoutError):
        return SendError(text or type(error).__name__, retryable=True, kind="transient")
    return SendError(text, retryable=False, kind="unknown")
