"""The external memory provider contract: lifecycle hooks, each told explicitly whom it acts for.

Invariants: every per-conversation call receives a ``ProviderContext`` naming the person and the
conversation, so a provider never guesses scope from ambient state; ``is_available`` does no network
I/O (it checks keys and packages only); only user and assistant text of real turns reaches
``sync_turn`` — internal traffic (memory flushes, summaries) never arrives there as user content.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agent_core.llm import ChatMessage, ToolSpec

MemoryAction = Literal["add", "replace", "remove"]
SwitchReason = Literal["compression", "new", "reset", "resume"]


@dataclass(frozen=True)
class ProviderContext:
    """Whom a provider call acts for: the person who owns the memory and the conversation it is in."""

    person_id: str
    conversation_id: str
    platform: str = "cli"


@dataclass(frozen=True)
class MemoryWrite:
    """One committed change to the built-in curated memory, mirrored to the provider."""

    action: MemoryAction
    target: str
    content: str | None
    old_text: str | None


class MemoryProvider(ABC):
    """One external memory backend; the ``MemoryManager`` bounds and isolates every call."""

    name: str = "provider"

    @abstractmethod
    def unavailable_reason(self) -> str | None:
        """Why this provider cannot run here (missing key or package), or None. No network I/O."""

    def is_available(self) -> bool:
        return self.unavailable_reason() is None

    async def initialize(self) -> None:  # noqa: B027  # optional hook: most providers need no set-up
        """Open clients and connections; called once at start-up."""

    async def system_prompt_block(self, ctx: ProviderContext) -> str:
        """Static text for the frozen system prompt of a new segment ("" for none)."""
        return ""

    @abstractmethod
    async def prefetch(self, ctx: ProviderContext, query: str) -> str | None:
        """Recall for the current user message (plain text, unfenced), or None."""

    async def queue_prefetch(self, ctx: ProviderContext, query: str) -> None:  # noqa: B027
        """Warm whatever the next ``prefetch`` for ``ctx`` will need (after a completed turn)."""

    async def sync_turn(self, ctx: ProviderContext, user: str, assistant: str) -> None:  # noqa: B027
        """Record one completed exchange."""

    async def on_turn_start(self, ctx: ProviderContext, message: str) -> None:  # noqa: B027
        """A user turn begins (before ``prefetch``)."""

    async def on_pre_compress(self, ctx: ProviderContext, messages: Sequence[ChatMessage]) -> str | None:
        """Facts the compression summary should consider, or None."""
        return None

    async def on_session_switch(  # noqa: B027
        self,
        ctx: ProviderContext,
        *,
        new_segment_id: str,
        parent_segment_id: str | None,
        reason: SwitchReason,
    ) -> None:
        """The conversation continues on a new segment (compression) or started afresh (/new, reset)."""

    async def on_memory_write(  # noqa: B027
        self,
        ctx: ProviderContext,
        *,
        action: MemoryAction,
        target: str,
        content: str | None,
        old_text: str | None,
    ) -> None:
        """Mirror of a committed built-in memory write (add, replace and remove)."""

    async def on_session_end(self, ctx: ProviderContext) -> None:  # noqa: B027
        """The conversation ended (/new, reset, expiry): flush anything buffered for it."""

    async def shutdown(self) -> None:  # noqa: B027
        """Close clients; called once at shutdown."""

    async def forget_person(self, person_id: str, conversation_ids: Sequence[str]) -> None:  # noqa: B027
        """Delete everything the provider keeps about the person (erasure): their memories, and what it
        holds for ``conversation_ids`` (the person's conversations). Errors are raised, never swallowed:
        the eraser reports a provider it could not clear."""

    def tool_schemas(self) -> tuple[ToolSpec, ...]:
        """Extra tools this provider offers the model (none by default)."""
        return ()
