"""Admission and time limits of the HTTP server's connections: a slow or idle client cannot hold a socket.

Invariants: at most ``capacity`` connections are open (the cap fits inside the process's open-file
limit, so ``accept`` never runs out of file descriptors); when full, the connection that has waited
longest without sending a request is closed to make room, and while every connection is busy new ones
wait in the kernel's listen backlog; a request's line and headers must arrive within
``header_timeout_s`` of the connection opening or the previous response ending (trickled bytes do not
extend it), and its body within ``body_timeout_s`` of its headers. A connection past its deadline is
closed without a log line: under attack that would be one line per socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle
from uvicorn.server import ServerState

_LOG = logging.getLogger("mnemogate.http")
# File descriptors kept for everything but HTTP clients: state.db and its readers, search.db, memory files,
# model and platform connections. A quarter of the limit, and never fewer than this.
_RESERVED_FDS = 64
_ACCEPT_RETRY_S = 0.1


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a client may take, and how many may be connected at once."""

    capacity: int
    header_timeout_s: float
    body_timeout_s: float


def fitting_capacity(configured: int) -> int:
    """``configured``, lowered (with a warning) to leave room for the process's other files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return configured
    budget = max(1, soft - max(_RESERVED_FDS, soft // 4))
    if budget < configured:
        _LOG.warning(
            "http.max_connections lowered from %d to %d to fit the open-file limit of %d "
            "(raise it with LimitNOFILE= or ulimit -n)",
            configured,
            budget,
            soft,
        )
        return budget
    return configured


class ConnectionBook:
    """Which connections are open and which of them wait for a request, oldest first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._open: set[GuardedH11Protocol] = set()
        self._waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self._freed = asyncio.Event()

    @property
    def full(self) -> bool:
        return len(self._open) >= self.capacity

    @property
    def open_count(self) -> int:
        return len(self._open)

    def opened(self, connection: GuardedH11Protocol) -> None:
        self._open.add(connection)
        self.waiting(connection)

    def waiting(self, connection: GuardedH11Protocol) -> None:
        """``connection`` has no request in progress: it may be evicted, oldest first."""
        if connection in self._open:
            self._waiting[connection] = None
            self._waiting.move_to_end(connection)
            self._freed.set()

    def busy(self, connection: GuardedH11Protocol) -> None:
        self._waiting.pop(connection, None)

    def closed(self, connection: GuardedH11Protocol) -> None:
        self._open.discard(connection)
        self._waiting.pop(connection, None)
        self._freed.set()

    def evict_oldest(self) -> bool:
        """Close the connection that has waited longest for a request; False when every one is busy."""
        if not self._waiting:
            return False
        victim, _ = self._waiting.popitem(last=False)
        self._open.discard(victim)  # its descriptor is released as soon as the loop runs its close
        victim.close_now()
        return True

    async def wait_for_room(self) -> None:
        """Return once a connection may be accepted: below capacity, or a waiting connection to evict."""
        while self.full and not self._waiting:
            self._freed.clear()
            await self._freed.wait()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the header and body deadlines and the book-keeping for eviction."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        book: ConnectionBook,
        limits: ConnectionLimits,
    ) -> None:
        super().__init__(config, server_state, app_state)
        self._book = book
        self._limits = limits
        self._deadline: asyncio.TimerHandle | None = None
        self._tracked: RequestResponseCycle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._book.opened(self)
        self._await_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self._book.closed(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track_request()

    def on_response_complete(self) -> None:
        if self.cycle is not None and self.cycle.more_body:
            # Answered before its body arrived (a 404, a 413): the body deadline still runs, because the
            # connection cannot carry another request until the rest of this one is read.
            self._book.waiting(self)
        else:
            self._await_request()
        super().on_response_complete()  # may start a pipelined request
        self._track_request()

    def close_now(self) -> None:
        """Close the connection (eviction or a missed deadline); the client sees the socket close."""
        self._cancel_deadline()
        if not self.transport.is_closing():
            self.transport.close()

    def _await_request(self) -> None:
        self._book.waiting(self)
        self._set_deadline(self._limits.header_timeout_s)

    def _track_request(self) -> None:
        cycle = self.cycle
        if cycle is None:
            return
        if cycle is not self._tracked:  # a request's headers have arrived
            self._tracked = cycle
            self._book.busy(self)
            if cycle.more_body:
                self._set_deadline(self._limits.body_timeout_s)
            else:
                self._cancel_deadline()
        elif not cycle.more_body and not cycle.response_complete:
            self._cancel_deadline()

    def _set_deadline(self, seconds: float) -> None:
        self._cancel_deadline()
        self._deadline = self.loop.call_later(seconds, self.close_now)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


def bind_sockets(host: str, port: int, backlog: int) -> list[socket.socket]:
    """Listening, non-blocking sockets for every address ``host`` resolves to, as create_server binds."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    seen: set[tuple[int, Any]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


async def accept_forever(
    listener: socket.socket, book: ConnectionBook, protocol: Callable[[], asyncio.Protocol]
) -> None:
    """Accept connections on ``listener`` within the book's capacity until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        await book.wait_for_room()
        try:
            client, _ = await loop.sock_accept(listener)
        except OSError as exc:  # EMFILE and friends: the limit is shared with the rest of the process
            _LOG.warning("cannot accept an HTTP connection: %s", exc)
            await asyncio.sleep(_ACCEPT_RETRY_S)
            continue
        # The book may have filled while this accept waited: hold the one accepted socket until there is room.
        while book.full and not book.evict_oldest():
            await book.wait_for_room()
        with contextlib.suppress(OSError):  # the client may already have hung up
            client.setblocking(False)
            await loop.connect_accepted_socket(protocol, client)
            continue
        client.close()
