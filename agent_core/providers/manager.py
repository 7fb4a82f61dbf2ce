"""The memory manager: the built-in memory's companion that runs at most one external provider safely.

Invariants: at most one external provider (a second is a ``ProviderConfigError``); a configured provider
that is unavailable (missing key or package) fails start-up with ``ProviderUnavailableError``; every
provider call is bounded by a timeout and guarded by one circuit breaker, and a failure only costs the
provider's contribution — it never fails a turn or delays it beyond the timeout. Background work
(sync_turn, queue_prefetch, memory mirroring) runs one call at a time in submission order, off the turn's
path, and is drained (bounded) at shutdown. Only user/assistant text of real turns reaches the provider;
compression summaries and the memory flush's instruction are filtered out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Self, TypeVar

from agent_core.actor import Actor
from agent_core.compression.summary import BANNER
from agent_core.llm import ChatMessage, ToolSpec

from .base import MemoryAction, MemoryProvider, ProviderContext, SwitchReason
from .breaker import CircuitBreaker, Clock, HealthState, ProviderHealth
from .errors import CircuitOpenError, ProviderCallError, ProviderConfigError, ProviderUnavailableError
from .settings import ProviderSettings

_LOG = logging.getLogger("mnemogate.providers")
_T = TypeVar("_T")
_MIRRORED_TARGETS = ("memory", "user")
_ACTIONS: tuple[MemoryAction, ...] = ("add", "replace", "remove")


class MemoryManager:
    """Runs the external provider beside the built-in memory; a ``RecallSource`` and ``CompressionHooks``."""

    def __init__(
        self,
        providers: Sequence[MemoryProvider] = (),
        *,
        settings: ProviderSettings | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        if len(providers) > 1:
            names = ", ".join(p.name for p in providers)
            raise ProviderConfigError(f"only one external memory provider can be active, got: {names}")
        self._provider = providers[0] if providers else None
        self._settings = settings or ProviderSettings()
        breaker = self._settings.breaker
        self._breaker = CircuitBreaker(
            failure_threshold=breaker.failure_threshold, reset_after_s=breaker.reset_after_s, clock=clock
        )
        self._background: set[asyncio.Task[None]] = set()
        self._order = asyncio.Lock()

    @property
    def provider(self) -> MemoryProvider | None:
        return self._provider

    # -- lifecycle ---------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        provider = self._provider
        if provider is None:
            return self
        reason = provider.unavailable_reason()
        if reason is not None:
            raise ProviderUnavailableError(f"memory provider {provider.name!r} is configured but {reason}")
        # A provider that is down at start-up must not block the gateway: it starts degraded instead.
        await self._guarded("initialize", provider.initialize(), self._settings.call_timeout_s)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.drain(self._settings.drain_timeout_s)
        abandoned = list(self._background)
        for task in abandoned:
            task.cancel()
        if abandoned:
            _LOG.warning("memory provider: abandoned %d background calls at shutdown", len(abandoned))
            await asyncio.gather(*abandoned, return_exceptions=True)
        if self._provider is not None:
            try:
                async with asyncio.timeout(self._settings.call_timeout_s):
                    await self._provider.shutdown()
            # A provider plugin boundary: shutdown goes on whatever the plugin raises.
            except Exception:
                _LOG.warning("memory provider %s shutdown failed", self._provider.name, exc_info=True)

    async def drain(self, timeout_s: float) -> bool:
        """Wait (bounded) for queued background provider work; True if it all finished."""
        pending = set(self._background)
        if not pending:
            return True
        _, left = await asyncio.wait(pending, timeout=timeout_s)
        if left:
            _LOG.warning(
                "memory provider: %d background calls still running after %.1fs", len(left), timeout_s
            )
        return not left

    def health(self) -> ProviderHealth:
        if self._provider is None:
            return ProviderHealth(provider="none", state=HealthState.DISABLED)
        return self._breaker.health(self._provider.name)

    def tool_schemas(self) -> tuple[ToolSpec, ...]:
        return self._provider.tool_schemas() if self._provider is not None else ()

    # -- the turn ----------------------------------------------------------------------------
    async def recall(self, actor: Actor, query: str) -> str | None:
        """``RecallSource``: on_turn_start then prefetch, within the prefetch timeout; None on failure."""
        provider = self._provider
        if provider is None:
            return None
        ctx = _context(actor)

        async def prologue() -> str | None:
            await provider.on_turn_start(ctx, query)
            return await provider.prefetch(ctx, query)

        text = await self._guarded("prefetch", prologue(), self._settings.prefetch_timeout_s)
        if not text or not text.strip():
            return None
        return text.strip()[: self._settings.recall_char_budget]

    async def system_prompt_block(self, ctx: ProviderContext) -> str:
        if self._provider is None:
            return ""
        block = await self._guarded(
            "system_prompt_block", self._provider.system_prompt_block(ctx), self._settings.call_timeout_s
        )
        return block or ""

    def turn_completed(self, ctx: ProviderContext, user: str, assistant: str) -> None:
        """After a completed user turn: sync it and warm the next prefetch, in the background."""
        provider = self._provider
        if provider is None or not user.strip() or not assistant.strip() or _is_handoff(user):
            return
        self._submit(
            ("sync_turn", lambda: provider.sync_turn(ctx, user, assistant)),
            ("queue_prefetch", lambda: provider.queue_prefetch(ctx, user)),
        )

    def observe_turn(self, actor: Actor, user: str, assistant: str) -> None:
        """``TurnObserver``: ``turn_completed`` for the actor's person and conversation."""
        self.turn_completed(_context(actor), user, assistant)

    def conversation_ended(self, person_id: str, conversation_id: str, platform: str) -> None:
        """A conversation ended (/new, reset, idle): ``on_session_end`` in the background."""
        self.session_ended(ProviderContext(person_id, conversation_id, platform))

    def session_ended(self, ctx: ProviderContext) -> None:
        if self._provider is not None:
            provider = self._provider
            self._submit(("on_session_end", lambda: provider.on_session_end(ctx)))

    def session_switched(
        self,
        ctx: ProviderContext,
        *,
        new_segment_id: str,
        parent_segment_id: str | None,
        reason: SwitchReason,
    ) -> None:
        if self._provider is not None:
            provider = self._provider
            self._submit(
                (
                    "on_session_switch",
                    lambda: provider.on_session_switch(
                        ctx, new_segment_id=new_segment_id, parent_segment_id=parent_segment_id, reason=reason
                    ),
                )
            )

    def memory_written(
        self, ctx: ProviderContext, *, action: str, target: str, content: str | None, old_text: str | None
    ) -> None:
        """Mirror one committed built-in memory change (global notes are agent-wide, not mirrored)."""
        provider = self._provider
        if provider is None or target not in _MIRRORED_TARGETS:
            return
        verb = next((a for a in _ACTIONS if a == action), None)
        if verb is None:
            return
        self._submit(
            (
                "on_memory_write",
                lambda: provider.on_memory_write(
                    ctx, action=verb, target=target, content=content, old_text=old_text
                ),
            )
        )

    # -- CompressionHooks --------------------------------------------------------------------
    async def on_pre_compress(self, actor: Actor, messages: Sequence[ChatMessage]) -> str | None:
        if self._provider is None:
            return None
        ctx = ProviderContext(actor.person_id, actor.conversation())
        said = [
            m
            for m in messages
            if m.role in ("user", "assistant") and m.content and not _is_handoff(m.content)
        ]
        return await self._guarded(
            "on_pre_compress", self._provider.on_pre_compress(ctx, said), self._settings.call_timeout_s
        )

    async def on_compressed(self, actor: Actor, parent_segment_id: str, segment_id: str) -> None:
        ctx = ProviderContext(actor.person_id, actor.conversation())
        self.session_switched(
            ctx, new_segment_id=segment_id, parent_segment_id=parent_segment_id, reason="compression"
        )

    # -- machinery ---------------------------------------------------------------------------
    def _submit(self, *steps: tuple[str, Callable[[], Awaitable[None]]]) -> None:
        """Queue ``steps`` as one background job; a failed step skips the rest."""

        async def run() -> None:
            async with self._order:
                for what, call in steps:
                    try:
                        await self._attempt(what, call(), self._settings.call_timeout_s)
                    except ProviderCallError as exc:
                        _LOG.warning("memory provider degraded: %s", exc)
                        return

        task = asyncio.get_running_loop().create_task(run(), name=f"memory-provider-{steps[0][0]}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _guarded(self, what: str, call: Awaitable[_T], timeout_s: float) -> _T | None:
        """Run one provider call through the breaker and the timeout; None when it failed or was refused."""
        try:
            return await self._attempt(what, call, timeout_s)
        except ProviderCallError as exc:
            _LOG.warning("memory provider degraded: %s", exc)
            return None

    async def _attempt(self, what: str, call: Awaitable[_T], timeout_s: float) -> _T:
        name = self._provider.name if self._provider is not None else "none"
        if not self._breaker.allow():
            if asyncio.iscoroutine(call):
                call.close()
            raise CircuitOpenError(f"{name}.{what} skipped: circuit open after repeated failures")
        try:
            async with asyncio.timeout(timeout_s):
                result = await call
        except TimeoutError as exc:
            self._breaker.record_failure(f"{what}: timed out after {timeout_s:g}s")
            raise ProviderCallError(f"{name}.{what} timed out after {timeout_s:g}s") from exc
        # A provider plugin boundary: whatever the SDK raises is this provider's failure, not the turn's.
        except Exception as exc:
            self._breaker.record_failure(f"{what}: {type(exc).__name__}: {exc}")
            raise ProviderCallError(f"{name}.{what} failed: {type(exc).__name__}: {exc}") from exc
        self._breaker.record_success()
        return result


def _context(actor: Actor) -> ProviderContext:
    return ProviderContext(actor.person_id, actor.conversation_id or "", actor.platform)


def _is_handoff(text: str) -> bool:
    """A compression handoff summary: internal traffic, never sent to a provider as user content."""
    return text.lstrip().startswith(BANNER)
