"""Running the FastAPI app under uvicorn inside our own event loop, so shutdown is ours to order.

Invariant: an app with guarded routes (admin API, OpenAI endpoint) never listens on a non-loopback
address without ``http.admin_token`` (``check_exposure`` raises before the socket is opened).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

import uvicorn
from fastapi import FastAPI

from gateway.config import HttpSettings
from gateway.http.access import check_exposure


class _EmbeddedServer(uvicorn.Server):
    """A uvicorn server that leaves signals to the composition root (it drains workers first)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def serve_http(app: FastAPI, host: str, port: int) -> AsyncIterator[uvicorn.Server]:
    """Serve until the context exits; yields once the socket is listening (a bind failure raises)."""
    settings: HttpSettings = getattr(app.state, "http", HttpSettings())
    if getattr(app.state, "guarded", False):
        check_exposure(host, settings.admin_token)
    config = uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="off", access_log=False)
    server = _EmbeddedServer(config)
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
