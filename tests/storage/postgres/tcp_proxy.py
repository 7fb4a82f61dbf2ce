"""A loopback TCP proxy in front of the PostgreSQL server, so a test can make the database go away.

What a client of the proxy sees is what it would see of a server that restarts: ``cut()`` drops every open
connection (both sides' sockets are aborted, as when the server process exits), ``refuse()`` also stops
listening, so new connections are refused (ECONNREFUSED, as while the server is down), and ``accept()``
listens again on the same port (the server is back). The machine's real server is never touched, so other
suites using it carry on. Bytes are copied as they come; the proxy knows nothing of the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import TracebackType
from typing import Self

from psycopg.conninfo import conninfo_to_dict, make_conninfo

_CHUNK = 64 * 1024


class TcpProxy:
    """``async with TcpProxy(host, port) as proxy``: listens on 127.0.0.1:``proxy.port``."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.accepted = 0
        """Connections accepted since the start (a client that reconnects shows here)."""
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._pipes: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        await self.accept()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.refuse()
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def accept(self) -> None:
        """Listen (again, on the same port once it has one) and forward every new connection."""
        if self._server is not None:
            return
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        self._server = await asyncio.start_server(self._forward, sock=sock)

    def cut(self) -> None:
        """Abort every open connection, both the client's and the server's side."""
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    async def refuse(self) -> None:
        """Stop listening and cut what is open: the server is down until ``accept``."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self.cut()

    async def _forward(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        self.accepted += 1
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.transport.abort()
            return
        self._open.update((client_writer, server_writer))
        pipes = [
            asyncio.create_task(self._pipe(client_reader, server_writer)),
            asyncio.create_task(self._pipe(server_reader, client_writer)),
        ]
        self._pipes.update(pipes)
        for pipe in pipes:
            pipe.add_done_callback(self._pipes.discard)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy one direction until either side closes; then close the other side too."""
        try:
            while chunk := await reader.read(_CHUNK):
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._open.discard(writer)
            with contextlib.suppress(
                OSError, RuntimeError
            ):  # already aborted by ``cut``, or the peer is gone
                writer.close()


def dsn_through(proxy: TcpProxy, dsn: str) -> str:
    """``dsn`` pointed at the proxy instead of the server."""
    params = conninfo_to_dict(dsn)
    params.update(host="127.0.0.1", port=str(proxy.port))
    return make_conninfo(**params)  # type: ignore[arg-type]
