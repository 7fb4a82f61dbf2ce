"""``SupervisedAdapter``: an adapter kept connected: start retried with backoff, a dead link restarted.

Invariants: a configuration problem (``AdapterConfigError``: a rejected token, a refused intent) stops
start-up on the first attempt, as before; any other start failure (platform unreachable, timed out) is
logged, shown in ``health`` (disconnected, the reason, the next attempt) and retried in the background
with capped exponential backoff and jitter until the adapter starts or the gateway stops; a half-started
adapter is stopped before the next attempt. A watchdog escalates what the platform library's own
reconnect could not fix: an adapter reporting itself disconnected for ``restart_after_s`` is logged as an
error, stopped and started again the same way. ``stop`` cancels all of this and then stops the adapter,
so no message reaches the sink after it returns; a stopped adapter may be started again. Everything else
is the wrapped adapter's.
"""

from __future__ import annotations

import asyncio
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
_WATCH_INTERVAL_MAX_S = 5.0
_CANCEL_ATTEMPTS = 20
_CANCEL_WAIT_S = 0.5


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, Exception) and not isinstance(exc, AdapterConfigError)


class SupervisedAdapter(Adapter):
    """``inner`` with its start and its connection supervised; sending and editing pass straight through."""

    def __init__(
        self,
        inner: Adapter,
        *,
        initial_s: float = 1.0,
        max_s: float = 60.0,
        restart_after_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self._initial_s, self._max_s, self._clock = initial_s, max_s, clock
        self._restart_after_s = restart_after_s
        self._supervisor: asyncio.Task[None] | None = None
        self._stopping = False
        self._inner_stop: asyncio.Future[None] | None = None
        self._failure = ""
        self._next_attempt_at: float | None = None
        self.restarts = 0

    @property
    def holds_connection(self) -> bool:
        return self.inner.holds_connection

    def use_checkpoints(self, checkpoints: Checkpoints) -> None:
        self.inner.use_checkpoints(checkpoints)

    async def start(self, sink: InboundSink) -> None:
        # Startable again after ``stop`` (a lease taken back: gateway/adapter_ownership.py).
        self._stopping, self._failure, self._next_attempt_at = False, "", None
        try:
            await self.inner.start(sink)
            started = True
        except AdapterConfigError:
            raise
        except Exception as exc:  # the adapter boundary: only a configuration problem is final
            await self._failed(exc)
            self._schedule_in(self._initial_s)
            started = False
        if started and self._restart_after_s <= 0:
            return
        self._supervisor = asyncio.create_task(self._supervise(sink, started), name=f"supervise-{self.name}")
        self._supervisor.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._failure = f"supervision failed: {task.exception()!r}"
            _LOG.error("%s adapter supervision ended unexpectedly", self.name, exc_info=task.exception())

    async def _supervise(self, sink: InboundSink, started: bool) -> None:
        while not self._stopping:
            if not started:
                await asyncio.sleep(self._initial_s)  # the attempt that just failed counts as the first
                if not await self._start_with_retries(sink):
                    return
            if self._restart_after_s <= 0:
                return
            down_s = await self._until_down_too_long()
            self.restarts += 1
            self._failure = f"disconnected for {down_s:.0f} s; restarting"
            _LOG.error("%s adapter was disconnected for %.0f s; restarting it", self.name, down_s)
            await self._stop_inner()
            started = False

    async def _start_with_retries(self, sink: InboundSink) -> bool:
        """Start ``inner`` until it works (True) or a configuration problem makes it pointless (False)."""
        retrying = AsyncRetrying(
            wait=wait_exponential(multiplier=self._initial_s, max=self._max_s)
            + wait_random(0, self._initial_s),
            retry=retry_if_exception(_retryable),
            before_sleep=self._schedule,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    try:
                        await self.inner.start(sink)
                    except Exception as exc:  # the adapter boundary, as in start()
                        await self._failed(exc)
                        raise
        except AdapterConfigError as exc:
            self._failure = f"gave up: {exc}"
            _LOG.error("%s adapter cannot start: %s", self.name, exc)
            return False
        self._failure, self._next_attempt_at = "", None
        _LOG.info("%s adapter started after retrying", self.name)
        return True

    async def _until_down_too_long(self) -> float:
        """Watch ``inner.health()``; return how long it was disconnected once that reaches the limit."""
        interval = min(_WATCH_INTERVAL_MAX_S, self._restart_after_s / 4)
        down_since: float | None = None
        while True:
            await asyncio.sleep(interval)  # a periodic health check, not synchronisation
            if self.inner.health().connected:
                down_since = None
                continue
            now = self._clock()
            down_since = now if down_since is None else down_since
            if now - down_since >= self._restart_after_s:
                return now - down_since

    async def _failed(self, exc: BaseException) -> None:
        self._failure = str(exc) or type(exc).__name__
        _LOG.warning(
            "%s adapter could not start (%s); retrying with backoff",
            self.name,
            self._failure,
            exc_info=not isinstance(exc, AdapterError | OSError | TimeoutError),
        )
        await self._stop_inner()  # release whatever the failed attempt opened

    async def _stop_inner(self) -> None:
        # Shielded and remembered: if the gateway stops meanwhile, ``stop`` waits for this stop to finish
        # instead of cutting it short (a second stop of a half-stopped adapter returns at once).
        self._inner_stop = asyncio.ensure_future(self.inner.stop())
        try:
            await asyncio.shield(self._inner_stop)
        except Exception:  # the adapter boundary: a failed stop must not end the supervision
            _LOG.warning("%s adapter did not stop cleanly", self.name, exc_info=True)

    def _schedule(self, state: RetryCallState) -> None:
        self._schedule_in(state.next_action.sleep if state.next_action is not None else self._initial_s)

    def _schedule_in(self, delay_s: float) -> None:
        self._next_attempt_at = self._clock() + delay_s

    async def stop(self) -> None:
        self._stopping = True
        supervisor, self._supervisor = self._supervisor, None
        # Platform libraries may swallow one cancellation while they shut down; cancel until it ends.
        for _ in range(_CANCEL_ATTEMPTS):
            if supervisor is None or supervisor.done():
                break
            supervisor.cancel()
            await asyncio.wait({supervisor}, timeout=_CANCEL_WAIT_S)
        if self._inner_stop is not None and not self._inner_stop.done():
            await asyncio.wait({self._inner_stop})
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
