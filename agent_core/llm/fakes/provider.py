"""The shared machinery of a fake model provider: a raw ASGI app that records and replies from a script.

Each HTTP request is recorded (method, path, headers, body, arrival time), then answered by the next
queued :class:`FakeReply` (or ``default`` when the queue is empty) — or by a function of the request that
returns one (``ReplySource``: an echo, a reply that depends on what was sent): after the reply's delay (cut
short if the client hangs up), either its HTTP error or the protocol rendering a subclass provides.
A request with the wrong API key gets the provider's 401 without consuming a reply.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from types import TracebackType
from typing import Any, Self

from agent_core.llm.fakes.errors import FakeServerError
from agent_core.llm.fakes.loopback import LoopbackServer
from agent_core.llm.fakes.script import FakeHTTPResponse, FakeReply, RecordedRequest

__all__ = ["FakeProviderServer", "ReplySource"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ReplySource = FakeReply | Callable[[RecordedRequest], FakeReply]


class FakeProviderServer(ABC):
    """Subclasses set ``paths`` and implement :meth:`render` and :meth:`error_response`."""

    paths: tuple[str, ...] = ()
    provider = "fake"

    def __init__(self, *, api_key: str | None = None, default: ReplySource | None = None) -> None:
        self.requests: list[RecordedRequest] = []
        self.api_key = api_key
        self.default: ReplySource = default or FakeReply()
        self._replies: deque[ReplySource] = deque()
        self._served = 0
        self._loopback = LoopbackServer(self._asgi)

    # -- lifecycle ---------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        await self._loopback.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._loopback.__aexit__(exc_type, exc, tb)

    @property
    def origin(self) -> str:
        return self._loopback.origin

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's ``base_url``."""
        return self.origin

    # -- script ------------------------------------------------------------------------------
    def script(self, *replies: ReplySource) -> None:
        self._replies.extend(replies)

    @property
    def pending_replies(self) -> int:
        return len(self._replies)

    async def wait_for_requests(self, count: int, *, timeout_s: float = 5.0) -> list[RecordedRequest]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.requests) < count:
            if loop.time() > deadline:
                raise FakeServerError(f"{self.provider}: {len(self.requests)} of {count} requests arrived")
            await asyncio.sleep(0.01)
        return list(self.requests)

    # -- protocol hooks ------------------------------------------------------------------------
    @abstractmethod
    def render(self, request: RecordedRequest, reply: FakeReply, serial: int) -> FakeHTTPResponse:
        """The provider's wire response for ``reply``."""

    @abstractmethod
    def error_response(self, status: int, error_type: str, message: str) -> FakeHTTPResponse:
        """The provider's error body for an HTTP ``status``."""

    def presented_key(self, request: RecordedRequest) -> str | None:
        auth = request.headers.get("authorization", "")
        return auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None

    # -- ASGI ----------------------------------------------------------------------------------
    async def _asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        if body is None:
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request = RecordedRequest(scope["method"], scope["path"], headers, body, time.monotonic())
        self.requests.append(request)
        response = await self._respond(request, receive)
        if response is not None:
            await _send_response(send, response)

    async def _respond(self, request: RecordedRequest, receive: Receive) -> FakeHTTPResponse | None:
        if request.method != "POST" or request.path not in self.paths:
            return self.error_response(404, "not_found_error", f"no route {request.method} {request.path}")
        if self.api_key is not None and self.presented_key(request) != self.api_key:
            return self.error_response(401, "authentication_error", "invalid x-api-key")
        source = self._replies.popleft() if self._replies else self.default
        reply = source if isinstance(source, FakeReply) else source(request)
        self._served += 1
        if reply.delay_s > 0 and await _hung_up_within(receive, reply.delay_s):
            return None
        if reply.status >= 400:
            response = self.error_response(reply.status, reply.error_type, reply.error_message)
            if reply.retry_after is not None:
                response = FakeHTTPResponse(
                    response.status, (*response.headers, ("retry-after", reply.retry_after)), response.chunks
                )
            return response
        return self.render(request, reply, self._served)


async def _read_body(receive: Receive) -> bytes | None:
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk: bytes = message.get("body", b"")
        body += chunk
        if not message.get("more_body", False):
            return body


async def _hung_up_within(receive: Receive, delay_s: float) -> bool:
    """Wait ``delay_s``; True as soon as the client disconnects (so shutdown never waits on it)."""

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    try:
        await asyncio.wait_for(disconnected(), timeout=delay_s)
    except TimeoutError:
        return False
    return True


async def _send_response(send: Send, response: FakeHTTPResponse) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    for index, chunk in enumerate(response.chunks):
        if index and response.chunk_delay_s:
            await asyncio.sleep(response.chunk_delay_s)
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
