"""Exceptions of the compression package; a failed compression reaches the turn as an outcome, not these."""

from __future__ import annotations


class CompressionError(Exception):
    """Base class of compression errors."""


class SummaryUnavailableError(CompressionError):
    """The summariser could not produce a summary; ``permanent`` when retrying cannot help (auth, quota)."""

    def __init__(self, reason: str, *, permanent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
