"""Errors raised by the fake provider servers themselves (never sent over the wire)."""

from __future__ import annotations

__all__ = ["FakeServerError"]


class FakeServerError(RuntimeError):
    """The fake could not start, or a wait on its recorded requests ran past its deadline."""
