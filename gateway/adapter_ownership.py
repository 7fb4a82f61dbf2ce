"""``LeasedAdapter``: a polling or socket adapter that runs in one process at a time, held by a lease.

Invariants: the wrapped adapter is started only after this process claimed the adapter's lease in the
database, and only this process's ``while_owned`` companions (its delivery loop) run beside it; the lease is
renewed every ``lease_s / 3``; a renewal that fails (database away, timed out) or finds another holder stops
the adapter at once, and a renewal that finds the lease was held by someone else meanwhile (a higher
``generation``) restarts it, so the adapter never runs on a stale hand-off. Ownership is also checked
locally, on a clock of this machine that keeps counting while it sleeps (``lease_clock``): the lease counts
as held only until the time the claim was sent plus the lease the database granted (minus a margin) — so
never later than the database's own expiry —
so a process that hung past its lease refuses every inbound message (the platform re-delivers it to the
new owner) and every send, edit and typing (a retryable ``SendError``) from the moment it wakes, before
its renewal even runs. A standby claims again when the owner's lease ends (and at least every
``lease_s / 3``), so it takes over within ``lease_s`` of the owner's last renewal when the owner dies,
hangs or loses the database; it continues from whatever the adapter keeps in the database (checkpoints)
or on the platform (Telegram's confirmed offset). ``stop`` stops the adapter and releases the lease, so a
standby takes over at once after a graceful stop. The holder id is unique per process (``new_holder``:
host name, pid and a random part).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_core.storage.errors import StateError
from gateway.contracts import (
    Adapter,
    AdapterError,
    AdapterHealth,
    ChatRef,
    Checkpoints,
    HttpRoute,
    InboundMessage,
    InboundOutcome,
    InboundSink,
    OutboundMessage,
    SendError,
    SendReceipt,
)
from gateway.storage.adapter_leases import AdapterLeaseRepository, LeaseState

_LOG = logging.getLogger("mnemogate.adapters")
_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", None)
_RELEASE_TIMEOUT_S = 5.0
_STANDBY_MIN_WAIT_S = 0.05


def lease_clock() -> float:
    """Seconds on a clock that never goes back and keeps counting while the machine sleeps (Linux
    ``CLOCK_BOOTTIME``, else ``time.monotonic``): a suspended host must not wake up trusting its lease."""
    return time.clock_gettime(_BOOTTIME) if _BOOTTIME is not None else time.monotonic()


WhileOwned = Callable[[Adapter], contextlib.AbstractAsyncContextManager[object]]
"""What runs beside the adapter only while this process owns it (its delivery loop), given the adapter."""


class NotOwnerError(SendError):
    """This process does not hold the adapter's lease (any more): nothing may be sent from here."""

    def __init__(self, adapter: str) -> None:
        super().__init__(f"{adapter} is not owned by this process", retryable=True, kind="not_owner")


class LeaseLostError(AdapterError):
    """An inbound message arrived after the lease ended; the platform re-delivers it to the owner."""


@dataclass(frozen=True, slots=True)
class LeaseTerms:
    """Who claims (``holder``: unique per process, ``new_holder``; ``host``: shown to operators) and for how
    long."""

    holder: str
    host: str
    lease_s: float

    @property
    def renew_every_s(self) -> float:
        return self.lease_s / 3

    @property
    def margin_s(self) -> float:
        """How much earlier than the database this process stops trusting its lease (clock rates differ)."""
        return min(0.5, self.lease_s * 0.05)


@dataclass(frozen=True, slots=True)
class Ownership:
    """What this process knows about an adapter's lease, for ``/readyz`` and ``/metrics``."""

    held: bool
    host: str | None = None
    """The owner's host (this one when ``held``); None while the database could not be asked."""
    holder: str | None = None
    remaining_s: float | None = None
    """How long the owner's lease lasts from now, as last learnt (None: unknown)."""
    generation: int | None = None
    error: str = ""

    def describe(self) -> str:
        if self.held:
            return f"owned by this host ({self.host})"
        if self.host is None:
            return f"standby (lease unknown: {self.error or 'not claimed yet'})"
        if self.remaining_s is not None and self.remaining_s > 0:
            return f"standby (owner {self.host}, lease ends in {self.remaining_s:.0f} s)"
        return f"standby (last owner {self.host}; lease ended, taking over)"


class LeasedAdapter(Adapter):
    """``inner`` run under ``adapter``'s lease: started while held, stopped at once when it is lost."""

    def __init__(
        self,
        inner: Adapter,
        leases: AdapterLeaseRepository,
        terms: LeaseTerms,
        *,
        while_owned: WhileOwned | None = None,
        clock: Callable[[], float] = lease_clock,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self.terms = terms
        self._leases = leases
        self._while_owned = while_owned
        self._clock = clock
        self._sink: InboundSink | None = None
        self._valid_until = -math.inf
        self._accepting = False
        self._running = False
        self._owned: contextlib.AsyncExitStack | None = None
        self._generation: int | None = None
        self._last: LeaseState | None = None
        self._last_at = 0.0
        self._error = ""
        self._hold_off_until = -math.inf
        self._watcher: asyncio.Task[None] | None = None
        self._transition = asyncio.Lock()
        self.takeovers = 0
        """Completed takeovers: the adapter and its companions running under a lease this process claimed."""
        self.losses = 0

    @property
    def holds_connection(self) -> bool:
        return self.inner.holds_connection

    def use_checkpoints(self, checkpoints: Checkpoints) -> None:
        self.inner.use_checkpoints(checkpoints)

    # -- ownership -------------------------------------------------------------------------------------

    def holds_lease(self) -> bool:
        """This process owns the adapter now (a lease the database granted, not yet past on this clock)."""
        return self._clock() < self._valid_until

    def ownership(self) -> Ownership:
        if self.holds_lease():
            return Ownership(True, self.terms.host, self.terms.holder, self._valid_until - self._clock())
        last = self._last
        if last is None or last.held:
            return Ownership(False, error=self._error)
        remaining = last.expires_in_s - (self._clock() - self._last_at)
        return Ownership(False, last.host, last.holder, remaining, last.generation, self._error)

    async def _claim(self, timeout_s: float) -> LeaseState | None:
        """Claim (or renew) once; None when the database did not answer in time (``_error`` says why)."""
        sent_at = self._clock()
        try:
            async with asyncio.timeout(max(timeout_s, 0.0)):
                state = await self._leases.claim(
                    self.name, self.terms.holder, self.terms.host, self.terms.lease_s
                )
        except (StateError, TimeoutError) as exc:
            self._error = f"lease claim failed: {str(exc) or type(exc).__name__}"
            return None
        self._last, self._last_at, self._error = state, self._clock(), ""
        if state.held:
            granted = min(self.terms.lease_s, state.expires_in_s)
            self._valid_until = sent_at + granted - self.terms.margin_s
        return state

    # -- lifecycle -------------------------------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        """Claim once now: the owner starts the adapter before this returns (a configuration problem
        raises, as without a lease); a standby returns at once and watches for the lease to end."""
        if self._watcher is not None:
            raise AdapterError(f"{self.name} adapter already started")
        self._sink = sink
        state = await self._claim(self.terms.renew_every_s)
        if state is not None and state.held:
            async with self._transition:
                await self._take_over(first=True)
        else:
            _LOG.info("%s adapter standing by: %s", self.name, self.ownership().describe())
        self._watcher = asyncio.create_task(self._watch(), name=f"lease-{self.name}")
        self._watcher.add_done_callback(self._watch_ended)

    def _watch_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._error = f"lease watch failed: {task.exception()!r}"
            _LOG.error("%s adapter lease watch ended unexpectedly", self.name, exc_info=task.exception())

    async def _watch(self) -> None:
        while True:
            if self._running:
                await asyncio.sleep(self.terms.renew_every_s)  # the renewal period, not synchronisation
                async with self._transition:
                    await self._renew()
            else:
                await asyncio.sleep(self._standby_wait_s())  # until the owner's lease may have ended
                if self._clock() < self._hold_off_until:
                    continue
                state = await self._claim(self.terms.renew_every_s)
                if state is not None and state.held:
                    async with self._transition:
                        await self._take_over(first=False)

    def _standby_wait_s(self) -> float:
        wait = self.terms.renew_every_s
        last = self._last
        if last is not None and not last.held:
            remaining = last.expires_in_s - (self._clock() - self._last_at)
            wait = min(wait, remaining + _STANDBY_MIN_WAIT_S)
        return max(wait, _STANDBY_MIN_WAIT_S)

    async def _renew(self) -> None:
        # Bounded by the renewal period, so a database that stopped answering stops the adapter while the
        # lease still runs (renewed at a third of it, failed by two thirds); the guards never rely on it.
        generation = self._generation
        state = await self._claim(self.terms.renew_every_s)
        if state is None:
            await self._lose(self._error)
        elif not state.held:
            await self._lose(f"the lease is held by {state.host} ({state.holder})")
        elif state.generation != generation:
            await self._lose(
                f"the lease was held by another process meanwhile (generation {state.generation})"
            )

    async def _take_over(self, *, first: bool) -> None:
        """Start the adapter (and its companions) under the lease just claimed."""
        if self._running or self._sink is None:
            return
        self._generation = self._last.generation if self._last is not None else None
        self._accepting = True
        try:
            await self.inner.start(self._accept)
        except Exception as exc:  # the adapter boundary: a standby's takeover must not end the watch
            self._accepting = False
            await self._stop_inner()  # whatever the failed start opened
            await self._release()
            if first:
                raise
            self._error = f"cannot start: {exc}"
            self._hold_off_until = self._clock() + self.terms.lease_s
            _LOG.error("%s adapter cannot start on this host: %s", self.name, exc, exc_info=True)
            return
        self._running = True
        await self._renew()  # a slow start (a socket's handshake) may have outlasted the lease
        if not self._running:
            return
        if self._while_owned is not None:
            owned = contextlib.AsyncExitStack()
            await owned.enter_async_context(self._while_owned(self))
            self._owned = owned
        self.takeovers += 1  # counted once the adapter and its companions run
        _LOG.info(
            "%s adapter owned by this host (%s, lease generation %s)",
            self.name,
            self.terms.holder,
            self._generation,
        )

    async def _lose(self, reason: str) -> None:
        """Stop at once: no inbound is accepted from now; the companions and the adapter stop."""
        self._accepting = False
        self.losses += 1
        _LOG.warning("%s adapter lost its lease (%s); stopping it on this host", self.name, reason)
        if self._clock() >= self._valid_until:
            # The lease may be another's already: stop polling first, then the companions.
            await self._stop_inner()
            await self._close_owned()
        else:
            # Still ours for a moment: sends in flight may finish, then nothing more goes out.
            await self._close_owned()
            self._valid_until = -math.inf
            await self._stop_inner()

    async def _close_owned(self) -> None:
        owned, self._owned = self._owned, None
        if owned is not None:
            try:
                await owned.aclose()
            except Exception:  # the component boundary: a failed companion must not keep the adapter up
                _LOG.warning("%s adapter's companions did not stop cleanly", self.name, exc_info=True)

    async def _stop_inner(self) -> None:
        self._running = False
        self._valid_until = -math.inf
        try:
            await self.inner.stop()
        except Exception:  # the adapter boundary: a failed stop still ends this process's ownership
            _LOG.warning("%s adapter did not stop cleanly", self.name, exc_info=True)

    async def _release(self) -> None:
        try:
            async with asyncio.timeout(min(_RELEASE_TIMEOUT_S, self.terms.lease_s)):
                await self._leases.release(self.name, self.terms.holder)
        except (StateError, TimeoutError):
            _LOG.info("%s adapter lease not released (it expires by itself)", self.name, exc_info=True)

    async def stop(self) -> None:
        # Under the transition lock, so a takeover or a loss in progress finishes before the watch ends.
        async with self._transition:
            watcher, self._watcher = self._watcher, None
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            self._accepting = False
            was_running = self._running
            await self._close_owned()
            await self._stop_inner()
            if watcher is not None or was_running:
                await self._release()
            self._sink = None

    # -- guarded traffic -------------------------------------------------------------------------------

    async def _accept(self, message: InboundMessage) -> InboundOutcome | None:
        sink = self._sink
        if sink is None or not self._accepting or not self.holds_lease():
            raise LeaseLostError(
                f"{self.name}: inbound message refused, this process does not own the adapter"
            )
        return await sink(message)

    def _require_lease(self) -> None:
        if not self.holds_lease():
            raise NotOwnerError(self.name)

    async def send(self, message: OutboundMessage) -> SendReceipt:
        self._require_lease()
        return await self.inner.send(message)

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        self._require_lease()
        await self.inner.edit(chat, platform_message_id, text)

    async def typing(self, chat: ChatRef) -> None:
        self._require_lease()
        await self.inner.typing(chat)

    def render(self, markdown: str) -> Sequence[str]:
        return self.inner.render(markdown)

    def http_routes(self) -> Sequence[HttpRoute]:
        return self.inner.http_routes()

    def health(self) -> AdapterHealth:
        if self._running:
            return self.inner.health()
        inner = self.inner.health()
        return AdapterHealth(
            connected=False,
            last_inbound_at=inner.last_inbound_at,
            last_send_at=inner.last_send_at,
            detail=self.ownership().describe(),
            standby=True,
        )
