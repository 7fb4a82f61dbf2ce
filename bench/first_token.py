"""``mnemogate bench first-token``: time to the first visible token of a streamed reply, and what the
gateway adds to the model's own.

A real ``mnemogate serve`` process (on a scratch home, the OpenAI-compatible provider pointed at a loopback
fake model in this process) answers ``requests`` streamed requests one after another through one route
(``--via``): ``v1`` is the OpenAI-compatible API read with the real ``openai`` SDK; ``webchat`` is the web
chat read as its page reads it (the event stream open while a message is posted). The fake model sends its
first token ``first_token_ms`` after a request arrives, then the rest of the reply in ``chunks`` pieces.
A request's time to first token runs from sending it to the first non-empty text it shows. The model's
own first token is measured the same way with the OpenAI SDK straight against the fake (``direct_*``);
``added_*`` are the quantiles of each routed request's time minus the direct median — everything the
gateway adds: the inbound pipeline and enqueue, the claim, the turn's reads and prompt, its call to the
model, and getting the first delta back to the client. The first ``warmup`` requests of each kind are not
counted. Requests cycle over ``users`` users (API users, or browsers), so conversations grow as they
would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Protocol

import httpx
import openai

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply

_MODEL = "bench-first-token"
_START_TIMEOUT_S = 60.0
_REPLY = "A streamed answer, sent in pieces so the reader sees it grow while the model is still writing."


class Route(Protocol):
    """One way a person reads a streamed reply."""

    async def first_token(self, text: str, user: str) -> float:
        """Send ``text`` as ``user``; seconds until its first visible text (the whole reply is read)."""
        ...


class OpenAIRoute:
    """``POST /v1/chat/completions`` with ``stream: true``, read with the ``openai`` SDK."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._client = client

    async def first_token(self, text: str, user: str) -> float:
        started = time.perf_counter()
        first: float | None = None
        stream = await self._client.chat.completions.create(
            model=_MODEL, messages=[{"role": "user", "content": text}], user=user, stream=True
        )
        async for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter() - started
        if first is None:
            raise RuntimeError("the stream ended without any text")
        return first


class WebChatRoute:
    """The web chat as the page reads it: the browser's event stream (``GET /api/chat/stream``) open while
    ``POST /api/chat/messages`` sends; the first visible text is the first streamed item with any text, and
    the reply is read until it is delivered whole. One cookie (browser) per user."""

    def __init__(self, base_url: str, stack: contextlib.AsyncExitStack) -> None:
        self._base_url = base_url
        self._stack = stack
        self._browsers: dict[str, httpx.AsyncClient] = {}

    async def _browser(self, user: str) -> httpx.AsyncClient:
        browser = self._browsers.get(user)
        if browser is None:
            client = httpx.AsyncClient(base_url=self._base_url, timeout=60)
            browser = self._browsers[user] = await self._stack.enter_async_context(client)
            (await browser.get("/")).raise_for_status()  # the page sets the browser's cookie
        return browser

    async def first_token(self, text: str, user: str) -> float:
        browser = await self._browser(user)
        first: float | None = None
        async with browser.stream("GET", "/api/chat/stream") as events:
            lines = events.aiter_lines()
            async for line in lines:
                if line.startswith("retry:"):
                    break  # the stream is attached: everything published from now on arrives on it
            started = time.perf_counter()
            (await browser.post("/api/chat/messages", json={"text": text})).raise_for_status()
            async for line in lines:
                if not line.startswith("data: "):
                    continue
                item = json.loads(line.removeprefix("data: "))
                if item.get("kind") not in ("stream", "reply"):
                    continue  # the turn's activity ("thinking…"), not its text
                if first is None and str(item.get("html", "")).strip():
                    first = time.perf_counter() - started
                if item["kind"] == "reply":
                    break
        if first is None:
            raise RuntimeError("the web chat showed no text")
        return first


@contextlib.asynccontextmanager
async def _via_v1(base_url: str) -> AsyncIterator[Route]:
    async with openai.AsyncOpenAI(base_url=f"{base_url}/v1", api_key="bench") as client:
        yield OpenAIRoute(client)


@contextlib.asynccontextmanager
async def _via_webchat(base_url: str) -> AsyncIterator[Route]:
    async with contextlib.AsyncExitStack() as stack:
        yield WebChatRoute(base_url, stack)


ROUTES: dict[str, Callable[[str], contextlib.AbstractAsyncContextManager[Route]]] = {
    "v1": _via_v1,
    "webchat": _via_webchat,
}
"""Routes by ``--via`` name, each opened on the gateway's base URL."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write_config(home: Path, model_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "model:\n"
        "  provider: openai\n"
        f"  model: {_MODEL}\n"
        f"  base_url: {model_url}\n"
        "rate_limit:\n"
        "  enabled: false\n"
        "log:\n"
        "  level: WARNING\n",
        encoding="utf-8",
    )


@contextlib.asynccontextmanager
async def serving(home: Path, model_url: str) -> AsyncIterator[str]:
    """``mnemogate serve`` on ``home`` with the model at ``model_url``; yields its base URL."""
    _write_config(home, model_url)
    port = _free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOGATE_")}
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        environment.pop(variable, None)
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "gateway.cli", "serve", "--home", str(home), "--port", str(port)),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env=environment,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        await _wait_ready(base_url, process)
        yield base_url
    finally:
        if process.returncode is None:
            process.terminate()
        try:
            await asyncio.wait_for(process.wait(), timeout=30)
        except TimeoutError:
            process.kill()
            await process.wait()


async def _wait_ready(base_url: str, process: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    async with httpx.AsyncClient(base_url=base_url, timeout=1) as client:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise RuntimeError(f"serve exited with {process.returncode} before it was ready")
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get("/readyz")).status_code == 200:
                    return
            await asyncio.sleep(0.05)  # polling a condition with a deadline
    raise RuntimeError(f"serve was not ready within {_START_TIMEOUT_S:g} s")


async def _measure(route: Route, count: int, warmup: int, users: int) -> list[float]:
    samples: list[float] = []
    for index in range(warmup + count):
        seconds = await route.first_token(f"Question {index}: how does this work?", f"bench-{index % users}")
        if index >= warmup:
            samples.append(seconds * 1000)
    return samples


def _quantiles(prefix: str, samples: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive") if len(samples) > 1 else samples * 99
    return {
        f"{prefix}_p50_ms": round(cuts[49], 2),
        f"{prefix}_p99_ms": round(cuts[98], 2),
        f"{prefix}_max_ms": round(max(samples), 2),
    }


async def _run(
    home: Path, via: str, requests: int, first_token_ms: float, chunks: int, warmup: int, users: int
) -> dict[str, float | int | str]:
    reply = FakeReply(text=_REPLY, chunks=chunks, delay_s=first_token_ms / 1000, chunk_delay_s=0.01)
    async with FakeOpenAIServer(default=reply) as model:
        async with openai.AsyncOpenAI(base_url=model.base_url, api_key="bench") as direct_client:
            direct = await _measure(OpenAIRoute(direct_client), requests, warmup, users)
        async with serving(home / "gateway", model.base_url) as base_url, ROUTES[via](base_url) as route:
            routed = await _measure(route, requests, warmup, users)
    own = statistics.median(direct)
    return {
        "via": via,
        "requests": requests,
        "model_delay_ms": first_token_ms,
        **_quantiles("direct", direct),
        **_quantiles("first_token", routed),
        **_quantiles("added", [sample - own for sample in routed]),
    }


def run(
    home: Path,
    *,
    via: str = "v1",
    requests: int = 100,
    first_token_ms: float = 300.0,
    chunks: int = 12,
    warmup: int = 3,
    users: int = 4,
) -> dict[str, float | int | str]:
    """Run the benchmark with ``home`` as scratch space; one JSON-ready mapping of figures."""
    if via not in ROUTES:
        raise ValueError(f"unknown route {via!r}; one of {sorted(ROUTES)}")
    return asyncio.run(_run(home, via, requests, first_token_ms, chunks, warmup, users))
