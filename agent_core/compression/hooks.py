"""The seam for external memory providers around compression: context before it, notice of the switch after.

Invariants: hooks are optional; every hook call is bounded by a timeout and a failing or slow provider
only loses its contribution — it never blocks, fails or changes the outcome of the compression.
Provider text enters only the summariser's prompt (as source material), capped in size.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

from agent_core.actor import Actor
from agent_core.llm import ChatMessage

_LOG = logging.getLogger("mnemogate.compression")


class CompressionHooks(Protocol):
    """What a memory provider may do around a compression (see DESIGN §9, ``on_pre_compress``)."""

    async def on_pre_compress(self, actor: Actor, messages: Sequence[ChatMessage]) -> str | None:
        """Text the provider wants the summary to consider (facts, not instructions), or None."""
        ...

    async def on_compressed(self, actor: Actor, parent_segment_id: str, segment_id: str) -> None:
        """The conversation continues on ``segment_id`` (the provider's ``on_session_switch``)."""
        ...


async def provider_context(
    hooks: CompressionHooks | None,
    actor: Actor,
    messages: Sequence[ChatMessage],
    *,
    timeout_s: float,
    max_chars: int,
) -> str | None:
    """The provider's pre-compression text, capped; None if there is none or the provider failed."""
    if hooks is None or max_chars <= 0:
        return None
    try:
        async with asyncio.timeout(timeout_s):
            text = await hooks.on_pre_compress(actor, messages)
    # A provider plugin boundary: whatever it raises, compression goes on without its context.
    except Exception:
        _LOG.warning("memory provider on_pre_compress failed", exc_info=True)
        return None
    if not text or not text.strip():
        return None
    return text.strip()[:max_chars]


async def announce_switch(
    hooks: CompressionHooks | None, actor: Actor, parent: str, child: str, *, timeout_s: float
) -> None:
    if hooks is None:
        return
    try:
        async with asyncio.timeout(timeout_s):
            await hooks.on_compressed(actor, parent, child)
    # A provider plugin boundary: the switch already happened; a provider failure must not undo the turn.
    except Exception:
        _LOG.warning("memory provider on_compressed failed", exc_info=True)
