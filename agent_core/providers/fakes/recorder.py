"""The shared core of the fake provider servers: a JSON route table on loopback that records every call.

Invariants: every request is recorded (method, path, query, headers, JSON body) before it is answered;
fault injection is explicit — ``fail_with(status)`` answers every call with that status, ``hang()`` holds
every call until ``heal()`` or shutdown — so tests can make a real SDK time out or fail without patching.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs

from agent_core.llm.fakes import FakeServerError, LoopbackServer

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class ProviderCall:
    """One HTTP request a provider SDK made."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any = field(default=None)


Handler = Callable[[ProviderCall, re.Match[str]], Reply]


class RecordingServer:
    """Subclasses register routes with :meth:`route` and check auth in :meth:`authorised`."""

    def __init__(self) -> None:
        self.calls: list[ProviderCall] = []
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._failure: int | None = None
        self._healed = asyncio.Event()
        self._healed.set()
        self._loopback = LoopbackServer(self._asgi)

    async def __aenter__(self) -> Self:
        await self._loopback.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._healed.set()
        await self._loopback.__aexit__(exc_type, exc, tb)

    @property
    def origin(self) -> str:
        return self._loopback.origin

    # -- faults --------------------------------------------------------------------------------
    def fail_with(self, status: int) -> None:
        self._failure = status

    def hang(self) -> None:
        self._healed.clear()

    def heal(self) -> None:
        self._failure = None
        self._healed.set()

    # -- routes --------------------------------------------------------------------------------
    def route(self, method: str, pattern: str, handler: Handler) -> None:
        self._routes.append((method, re.compile(pattern + r"/?$"), handler))

    def authorised(self, call: ProviderCall) -> bool:
        return True

    def calls_to(self, method: str, pattern: str) -> list[ProviderCall]:
        compiled = re.compile(pattern + r"/?$")
        return [c for c in self.calls if c.method == method and compiled.match(c.path)]

    async def wait_for(self, method: str, pattern: str, count: int, *, timeout_s: float = 5.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.calls_to(method, pattern)) < count:
            if loop.time() > deadline:
                raise FakeServerError(f"{count} x {method} {pattern} did not arrive within {timeout_s}s")
            await asyncio.sleep(0.01)

    def _answer(self, call: ProviderCall) -> Reply:
        if self._failure is not None:
            return Reply(self._failure, {"detail": "injected failure", "message": "injected failure"})
        if not self.authorised(call):
            return Reply(401, {"detail": "Invalid API key", "message": "Invalid API key"})
        for method, pattern, handler in self._routes:
            match = pattern.match(call.path)
            if match and method == call.method:
                return handler(call, match)
        return Reply(404, {"detail": f"no route {call.method} {call.path}", "message": "not found"})

    async def _asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        query = {k: v[-1] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        call = ProviderCall(scope["method"], scope["path"], query, headers, json.loads(raw) if raw else None)
        self.calls.append(call)
        await self._healed.wait()
        reply = self._answer(call)
        payload = json.dumps(reply.body).encode() if reply.body is not None else b""
        await send(
            {
                "type": "http.response.start",
                "status": reply.status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": payload})
