"""Serving an ASGI app on 127.0.0.1 with an OS-assigned port inside the caller's event loop.

:class:`LoopbackServer` is an async context manager: on entry the port is bound and uvicorn is
accepting; on exit uvicorn has stopped and the socket is closed. It never touches global logging
configuration (``log_config=None``).
"""

from __future__ import annotations

import asyncio
import socket
from types import TracebackType
from typing import Any, Self

import uvicorn

from agent_core.llm.fakes.errors import FakeServerError

__all__ = ["LoopbackServer"]

_START_DEADLINE_S = 10.0
_POLL_S = 0.01


class LoopbackServer:
    def __init__(self, app: Any, *, graceful_shutdown_s: int = 1) -> None:
        self._app = app
        self._graceful_shutdown_s = graceful_shutdown_s
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self.port = 0

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app,
            lifespan="off",
            interface="asgi3",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=self._graceful_shutdown_s,
        )
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        await self._wait_started()
        return self

    async def _wait_started(self) -> None:
        assert self._server is not None and self._task is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _START_DEADLINE_S
        while not self._server.started:
            if self._task.done():
                await self._task  # re-raises the startup failure
                raise FakeServerError("fake server stopped during startup")
            if loop.time() > deadline:
                raise FakeServerError(f"fake server did not start within {_START_DEADLINE_S}s")
            await asyncio.sleep(_POLL_S)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            await self._task
        if self._socket is not None:
            self._socket.close()
