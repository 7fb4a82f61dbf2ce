"""Errors an adapter raises; delivery decides from them whether and when to retry."""

from __future__ import annotations


class AdapterError(Exception):
    """An adapter could not start or act."""


class AdapterConfigError(AdapterError):
    """An enabled adapter lacks its token or its optional dependency; the message says which."""


class SendError(AdapterError):
    """A send or edit failed. ``retryable`` with ``retry_after`` (seconds) when the platform said so."""

    def __init__(
        self, message: str, *, retryable: bool, retry_after: float | None = None, kind: str = "unknown"
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind


class BadFormatError(SendError):
    """The platform rejected the formatting; delivery re-sends the chunk once as plain text."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False, kind="bad_format")
