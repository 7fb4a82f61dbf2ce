"""What a turn reports while it runs; the gateway turns these into typing, streaming and the reply."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReplyDelta:
    """A piece of reply text as the model streams it (thinking text never arrives here)."""

    text: str


@dataclass(frozen=True)
class ToolStarted:
    name: str
    call_id: str


@dataclass(frozen=True)
class ToolFinished:
    name: str
    call_id: str
    is_error: bool


@dataclass(frozen=True)
class TurnFinished:
    """The turn's final reply, already persisted as ``message_id``."""

    text: str
    message_id: int
    segment_id: str


@dataclass(frozen=True)
class TurnFailed:
    """The model could not answer; ``text`` is the error reply the user gets (also persisted)."""

    text: str
    message_id: int
    segment_id: str
    reason: str


TurnEvent = ReplyDelta | ToolStarted | ToolFinished | TurnFinished | TurnFailed
