"""Errors of the turn queue and the worker pool."""

from __future__ import annotations


class QueueError(Exception):
    """The turn queue could not accept or run work."""


class UnknownBusyPolicyError(QueueError):
    """The configured busy policy is not one of the known names."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown busy policy {name!r} (expected 'queue' or 'interrupt')")
