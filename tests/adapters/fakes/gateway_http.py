"""An adapter's webhook routes served the way ``mnemogate serve`` serves them: the gateway's own app
(``create_app(adapter_routes=…)``) under its own uvicorn runner (``serve_http``) on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from gateway.contracts import Adapter
from gateway.http import Readiness, create_app, serve_http
from tests.e2e.gateway_process import free_port


@asynccontextmanager
async def serve_routes(adapter: Adapter) -> AsyncIterator[str]:
    """Yields the base URL once the routes answer; stops the server on exit."""
    app = create_app(Readiness({}), adapter_routes=adapter.http_routes())
    port = free_port()
    async with serve_http(app, "127.0.0.1", port):
        yield f"http://127.0.0.1:{port}"
