"""Errors of the embedded web chat and API channels."""

from __future__ import annotations

from gateway.contracts import AdapterError


class ChannelNotStartedError(AdapterError):
    """A message arrived before the gateway started the channel (or after it stopped)."""


class ReplyTimeoutError(AdapterError):
    """No reply was delivered to a waiting API caller within its timeout."""
