"""Errors of the embedded web chat and API channels."""

from __future__ import annotations

from gateway.contracts import AdapterError


class ChannelNotStartedError(AdapterError):
    """A message arrived before the gateway started the channel (or after it stopped)."""


class ReplyTimeoutError(AdapterError):
    """No reply was delivered to a waiting API caller within its timeout."""


class MessageRefusedError(AdapterError):
    """The gateway refused the message (``reason``: "rate_limited" or "denied"); nothing was stored.

    ``retry_after_s`` says when a rate-limited sender may try again; the message is fit to show the user.
    """

    def __init__(self, reason: str, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after_s = retry_after_s
