"""Retention of one deployment: the runner over a storage, deleting expired conversations the way erasure
does — the gateway's rows of them, then the agent's (``forget_conversations``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .runner import ConversationForgetter, RetentionReport, RetentionRunner

if TYPE_CHECKING:  # the config package imports this package's settings: no import at run time
    from gateway.config import Settings
    from gateway.storage import Storage


def forgetter(storage: Storage) -> ConversationForgetter:
    """Deletes conversations completely: the gateway's rows of them first (a crash between the two leaves
    the conversations, which the next run finds again), then ``forget_conversations``."""

    async def forget(conversation_ids: Sequence[str]) -> int:
        await storage.erasure.forget_conversation_rows(conversation_ids)
        return (await storage.agent.forget_conversations(conversation_ids)).conversations

    return forget


def retention_runner(
    settings: Settings,
    storage: Storage,
    *,
    holder: str | None = None,
    on_report: Callable[[RetentionReport], None] | None = None,
) -> RetentionRunner:
    """The retention runner of ``storage`` with the configured ages (``async with`` it to run it in the
    background when ``retention.enabled``)."""
    return RetentionRunner(
        storage.retention, settings.retention, forget=forgetter(storage), holder=holder, on_report=on_report
    )
