"""``SupervisedAdapter``: a platform adapter whose start is retried with backoff while the platform is away.

Invariants: a configuration problem (``AdapterConfigError``: a rejected token, a refused intent) stops
start-up on the first attempt, as before; any other start failure (platform unreachable, timed out) is
logged, shown in ``health`` (disconnected, the reason, the next attempt) and retried in the background
with capped exponential backoff and jitter until the adapter starts or the gateway stops; a half-started
adapter is stopped before the next attempt; ``stop`` cancels the retries and then stops the adapter, so
no message reaches the sink after it returns. Everything else is the wrapped adapter's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential, wait_random

from gateway.contracts import (
    Adapter,
    AdapterConfigError,
    AdapterError,
    AdapterHealth,
    ChatRef,
    Checkpoints,
    HttpRoute,
    InboundSink,
    OutboundMessage,
    SendReceipt,
)

_LOG = logging.getLogger("mnemogate.adapters")
_TRANSIENT = (AdapterError, OSError, TimeoutError)


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, _TRANSIENT) and not isinstance(exc, AdapterConfigError)


class SupervisedAdapter(Adapter):
    """``inner`` with its start supervised; sending, editing and health otherwise pass straight through."""

    def __init__(
        self,
        inner: Adapter,
        *,
        initial_s: float = 1.0,
        max_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self._initial_s, self._max_s, self._clock = initial_s, max_s, clock
        self._retrying: asyncio.Task[None] | None = None
        self._failure = ""
        self._next_attempt_at: float | None = None

    def use_checkpoints(self, checkpoints: Checkpoints) -> None:
        self.inner.use_checkpoints(checkpoints)

    async def start(self, sink: InboundSink) -> None:
        try:
            await self.inner.start(sink)
            return
        except AdapterConfigError:
            raise
        except _TRANSIENT as exc:
            await self._failed(exc)
        self._schedule_in(self._initial_s)
        self._retrying = asyncio.create_task(self._keep_starting(sink), name=f"start-{self.name}")

    async def _keep_starting(self, sink: InboundSink) -> None:
        retrying = AsyncRetrying(
            wait=wait_exponential(multiplier=self._initial_s, max=self._max_s)
            + wait_random(0, self._initial_s),
            retry=retry_if_exception(_retryable),
            before_sleep=self._schedule,
            reraise=True,
        )
        try:
            await asyncio.sleep(self._initial_s)  # the first attempt already failed in start()
            async for attempt in retrying:
                with attempt:
                    try:
                        await self.inner.start(sink)
                    except _TRANSIENT as exc:
                        await self._failed(exc)
                        raise
        except AdapterConfigError as exc:
            self._failure = f"gave up: {exc}"
            _LOG.error("%s adapter cannot start: %s", self.name, exc)
            return
        self._failure, self._next_attempt_at = "", None
        _LOG.info("%s adapter started after retrying", self.name)

    async def _failed(self, exc: BaseException) -> None:
        self._failure = str(exc) or type(exc).__name__
        _LOG.warning("%s adapter could not start (%s); retrying with backoff", self.name, self._failure)
        with contextlib.suppress(*_TRANSIENT):
            await self.inner.stop()  # release whatever the failed attempt opened

    def _schedule(self, state: RetryCallState) -> None:
        self._schedule_in(state.next_action.sleep if state.next_action is not None else self._initial_s)

    def _schedule_in(self, delay_s: float) -> None:
        self._next_attempt_at = self._clock() + delay_s

    async def stop(self) -> None:
        retrying, self._retrying = self._retrying, None
        if retrying is not None:
            retrying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await retrying
        await self.inner.stop()

    def health(self) -> AdapterHealth:
        health = self.inner.health()
        if not self._failure or health.connected:
            return health
        detail = f"not started: {self._failure}"
        if self._next_attempt_at is not None and not self._failure.startswith("gave up"):
            detail += f"; next attempt in {max(0.0, self._next_attempt_at - self._clock()):.0f} s"
        return AdapterHealth(
            connected=False,
            last_inbound_at=health.last_inbound_at,
            last_send_at=health.last_send_at,
            detail=detail,
        )

    async def send(self, message: OutboundMessage) -> SendReceipt:
        return await self.inner.send(message)

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        await self.inner.edit(chat, platform_message_id, text)

    async def typing(self, chat: ChatRef) -> None:
        await self.inner.typing(chat)

    def render(self, markdown: str) -> Sequence[str]:
        return self.inner.render(markdown)

    def http_routes(self) -> Sequence[HttpRoute]:
        return self.inner.http_routes()
