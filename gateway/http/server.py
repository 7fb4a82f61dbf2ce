"""Running the FastAPI app under uvicorn inside our own event loop, so shutdown is ours to order.

Invariants: no app listens on a non-loopback address without ``http.admin_token`` (``check_exposure`` runs
for every app, whatever it mounts, before the socket is opened);
connections are accepted by our own loop within ``http.max_connections`` and the header, body and
keep-alive deadlines of ``gateway.http.connections``; at stop, open requests get ``http.shutdown_grace_s``
and are then cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import socket
from collections.abc import AsyncIterator, Iterator

import uvicorn
from fastapi import FastAPI

from gateway.config import HttpSettings
from gateway.http.access import check_exposure
from gateway.http.connections import (
    ConnectionBook,
    ConnectionLimits,
    GuardedH11Protocol,
    accept_forever,
    bind_sockets,
    fitting_capacity,
)


class _EmbeddedServer(uvicorn.Server):
    """A uvicorn server that leaves signals to the composition root and accepts through a ConnectionBook."""

    def __init__(self, config: uvicorn.Config, limits: ConnectionLimits) -> None:
        super().__init__(config)
        self._limits = limits
        self._book = ConnectionBook(limits.capacity)
        self._acceptors: list[asyncio.Task[None]] = []

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await self.lifespan.startup()
        config = self.config
        loop = asyncio.get_running_loop()

        def protocol() -> asyncio.Protocol:
            return GuardedH11Protocol(
                config, self.server_state, self.lifespan.state, self._book, self._limits
            )

        listeners = bind_sockets(config.host, config.port, config.backlog)
        # Servers that never accept by themselves: they own the sockets, so shutdown closes them.
        self.servers = [await loop.create_server(protocol, sock=s, start_serving=False) for s in listeners]
        self._acceptors = [asyncio.create_task(accept_forever(s, self._book, protocol)) for s in listeners]
        self.started = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for task in self._acceptors:
            task.cancel()
        await asyncio.gather(*self._acceptors, return_exceptions=True)
        await super().shutdown(sockets)


@contextlib.asynccontextmanager
async def serve_http(app: FastAPI, host: str, port: int) -> AsyncIterator[uvicorn.Server]:
    """Serve until the context exits; yields once the socket is listening (a bind failure raises)."""
    settings: HttpSettings = getattr(app.state, "http", None) or HttpSettings()
    # Fail closed: whatever the app mounts, a public address needs the admin token.
    check_exposure(host, settings.admin_token)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        lifespan="off",
        access_log=False,
        timeout_keep_alive=settings.keep_alive_s,
        timeout_graceful_shutdown=math.ceil(settings.shutdown_grace_s),
    )
    limits = ConnectionLimits(
        capacity=fitting_capacity(settings.max_connections),
        header_timeout_s=settings.header_timeout_s,
        body_timeout_s=settings.body_timeout_s,
    )
    server = _EmbeddedServer(config, limits)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise OSError(f"the HTTP server could not listen on {host}:{port}")
            await asyncio.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
