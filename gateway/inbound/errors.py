"""Errors of the inbound pipeline."""

from __future__ import annotations


class InboundError(Exception):
    """The inbound pipeline could not process a message."""


class DuplicateCommandError(InboundError):
    """Two commands in one table claim the same name or alias."""

    def __init__(self, name: str) -> None:
        super().__init__(f"command /{name} is defined twice")
