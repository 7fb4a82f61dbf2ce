"""Errors of the delivery side."""

from __future__ import annotations


class DeliveryError(Exception):
    """A delivery could not be queued or performed."""


class NoAdapterError(DeliveryError):
    """An outbox row names a platform this process has no adapter for."""

    def __init__(self, platform: str) -> None:
        super().__init__(f"no adapter for platform {platform!r} in this process")
