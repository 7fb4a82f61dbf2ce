"""The ``Adapter`` contract: translate native updates to ``InboundMessage`` and ``OutboundMessage`` to calls.

Adapters never queue, lock, retry or build prompts; the gateway does. An adapter is an async context
manager: ``start`` connects and begins handing messages to the sink, ``stop`` is its mirror image.
Adapters are found through the entry-point group ``mnemogate.adapters``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import TracebackType
from typing import Any, Protocol, Self

from gateway.contracts.capabilities import Capabilities
from gateway.contracts.errors import AdapterConfigError, AdapterError
from gateway.contracts.messages import ChatRef, InboundMessage, OutboundMessage, SendReceipt

ENTRY_POINT_GROUP = "mnemogate.adapters"


@dataclass(frozen=True)
class InboundOutcome:
    """What the gateway did with one inbound message, for an adapter whose sender waits on the answer.

    ``accepted``: recorded (or a duplicate of a recorded one). Otherwise ``reason`` is "rate_limited" or
    "denied" (for a ``caller_waits`` message nothing was recorded, so a retry is judged afresh),
    ``retry_after_s`` says when a rate-limited sender may try again and ``notice`` is the text a platform
    user would have been sent. Platform adapters may ignore it: their senders get the notice as a message.
    """

    accepted: bool
    reason: str = "accepted"
    retry_after_s: float | None = None
    notice: str | None = None


InboundSink = Callable[[InboundMessage], Awaitable[InboundOutcome | None]]
"""Where an adapter hands each inbound message; it returns once the message is durably accepted (or
refused), with the outcome (None from a sink that only accepts)."""


class Checkpoints(Protocol):
    """Positions an adapter keeps across restarts (e.g. the newest message handled per channel).

    Positions per key only move forward: ``advance`` with a lower position than the stored one is a no-op,
    so concurrent hand-offs may record in any order.
    """

    async def load(self) -> Mapping[str, int]:
        """Every key this adapter recorded, with its position."""
        ...

    async def advance(self, key: str, position: int) -> None:
        """Durably record ``position`` for ``key`` unless a higher one is already stored."""
        ...

    async def forget(self, keys: Collection[str]) -> None:
        """Drop these keys (a thread gone quiet, a channel deleted); unknown keys are ignored."""
        ...


@dataclass(frozen=True)
class AdapterHealth:
    """Connection state for ``/readyz`` and ``/metrics``."""

    connected: bool
    last_inbound_at: float | None = None
    last_send_at: float | None = None
    detail: str = ""
    standby: bool = False
    """Another process runs this connection and this one stands by to take over: not a failure."""


@dataclass(frozen=True)
class HttpRoute:
    """A webhook endpoint an adapter serves on the gateway's HTTP app (e.g. Telegram, Slack events)."""

    path: str
    methods: tuple[str, ...]
    endpoint: Callable[..., Awaitable[Any]]


class Adapter(ABC):
    """One platform connection."""

    name: str
    capabilities: Capabilities

    @property
    def holds_connection(self) -> bool:
        """True when updates arrive over a connection the adapter opens (long polling, a gateway socket,
        Socket Mode), which the platform allows once per bot: the gateway then runs it in one process at a
        time. False (the default) when the platform pushes to an HTTP endpoint every host may serve."""
        return False

    @abstractmethod
    async def start(self, sink: InboundSink) -> None:
        """Connect and begin delivering inbound messages to ``sink``."""

    def use_checkpoints(self, checkpoints: Checkpoints) -> None:
        """Called by the gateway before ``start``; an adapter that catches up after a restart keeps it."""
        return None

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect; no message reaches the sink after this returns."""

    @abstractmethod
    async def send(self, message: OutboundMessage) -> SendReceipt:
        """Send one rendered chunk; raise ``SendError`` on failure."""

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        """Replace a sent message's text (only when ``capabilities.can_edit``)."""
        raise AdapterError(f"{self.name} cannot edit messages")

    async def typing(self, chat: ChatRef) -> None:
        """Show a typing indicator once (only when ``capabilities.can_typing``)."""
        return None

    def render(self, markdown: str) -> Sequence[str]:
        """Markdown to this platform's dialect, chunked within its limits. Plain text by default."""
        return [markdown]

    def http_routes(self) -> Sequence[HttpRoute]:
        return ()

    def health(self) -> AdapterHealth:
        return AdapterHealth(connected=True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


AdapterFactory = Callable[[Any], Adapter]


def load_adapter_factory(name: str) -> AdapterFactory:
    """The factory registered as ``name`` in ``mnemogate.adapters``; a clear error when it is missing."""
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name:
            try:
                factory: AdapterFactory = entry.load()
            except ImportError as exc:
                raise AdapterConfigError(
                    f"adapter {name!r} is enabled but its library is not installed "
                    f"(pip install 'mnemogate[{name}]'): {exc}"
                ) from exc
            return factory
    raise AdapterConfigError(
        f"no adapter named {name!r} is installed (entry-point group {ENTRY_POINT_GROUP})"
    )
