"""``mnemogate bench growth``: resident memory and database bytes per 1,000 messages on the serve path.

One process runs what ``mnemogate serve`` runs for the web chat: the inbound pipeline, the in-process
worker pool (a zero-latency scripted model answers every message with ``reply_chars`` characters), the
delivery loop publishing replies into the web chat's in-memory feed, and the search indexer. ``chats``
browsers take turns sending messages until ``messages`` have been answered, ``inflight`` of them typing
at once. Every 1,000 answered messages the process's resident set and the bytes of state.db, its WAL and
search.db (with its WAL) are sampled; ``per_1000`` is the growth from the start to the end of the run.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agent_core.llm import LLMEvent, LLMRequest
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.config import Home, Settings
from gateway.delivery import DeliveryLoop
from gateway.runtime import Runtime, build_gateway, open_runtime, worker_pool
from gateway.storage.sqlite import SqliteStorage
from gateway.webchat import WebChatAdapter

_SAMPLE_EVERY = 1_000
_REPLY_TIMEOUT_S = 120.0
_MB = 1024 * 1024


def growth_config(outbox_keep_days: float | None) -> dict[str, Any]:
    delivery: dict[str, Any] = {}
    if outbox_keep_days is not None:
        # A short keep makes the pruning visible within one run; production keeps days.
        delivery = {"outbox_keep_days": outbox_keep_days, "outbox_prune_every_s": 1.0}
    return {"rate_limit": {"enabled": False}, "delivery": delivery}


def run(
    home: Path,
    messages: int,
    chats: int,
    *,
    reply_chars: int = 2_000,
    inflight: int = 16,
    outbox_keep_days: float | None = None,
) -> dict[str, Any]:
    """Run in a fresh directory under ``home`` (removed afterwards); return the figures."""
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-growth-", dir=home))
    try:
        settings = Settings(**growth_config(outbox_keep_days))
        return asyncio.run(_drive(workdir, settings, messages, chats, reply_chars, inflight))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def _drive(
    home: Path, settings: Settings, messages: int, chats: int, reply_chars: int, inflight: int
) -> dict[str, Any]:
    reply = ("lorem ipsum dolor sit amet " * (reply_chars // 27 + 1))[:reply_chars]
    client = _ForgetfulClient(default=ScriptStep.reply(reply))
    async with open_runtime(Home(home), settings, client=client) as runtime:
        web = WebChatAdapter("web")
        gateway = build_gateway(runtime)
        async with web:
            await web.start(gateway.pipeline.handle)
            delivery = DeliveryLoop(
                outbox=gateway.outbox.repository,
                adapters={"web": web},
                signals=runtime.signals,
                settings=settings.delivery,
            )
            async with delivery, worker_pool(runtime):
                return await _measure(runtime, web, messages, chats, inflight, reply_chars)


class _ForgetfulClient(ScriptedClient):
    """The scripted model minus its log of requests: the figures are the gateway's memory, not the fake's."""

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        async for event in super().stream(request):
            yield event
        self.requests.clear()


async def _measure(
    runtime: Runtime, web: WebChatAdapter, messages: int, chats: int, inflight: int, reply_chars: int
) -> dict[str, Any]:
    files = _Files(runtime)
    start = files.sample(0)
    samples: list[dict[str, float]] = []
    turns = itertools.count()
    answered = 0

    users = max(1, min(inflight, chats))
    own = max(1, chats // users)  # each browser tab owns its chats, so no chat has two senders at once

    async def browser(tab: int) -> None:
        nonlocal answered
        for k in itertools.count():
            n = next(turns)
            if n >= messages:
                return
            chat = tab * own + k % own
            await _say(web, f"browser{chat:06d}", f"message {n}")
            answered += 1
            if answered % _SAMPLE_EVERY == 0:
                samples.append(files.sample(answered))

    began = time.perf_counter()
    await asyncio.gather(*(browser(tab) for tab in range(users)))
    wall = time.perf_counter() - began
    end = files.sample(answered)
    outbox_rows = await runtime.storage.admin.outbox_count()
    scale = _SAMPLE_EVERY / max(answered, 1)
    per_1000 = {key: round((end[key] - start[key]) * scale, 3) for key in end if key != "messages"}
    return {
        "messages": answered,
        "chats": chats,
        "reply_chars": reply_chars,
        "wall_s": round(wall, 2),
        "start": start,
        "end": end,
        "per_1000": per_1000,
        "wal_mb_max": max((s["wal_mb"] for s in [*samples, end]), default=0.0),
        "outbox_rows": outbox_rows,
        "samples": samples,
    }


async def _say(web: WebChatAdapter, chat_id: str, text: str) -> None:
    """What the page does: note the feed position, post the message, wait for what is delivered after it."""
    cursor = web.feed.position()
    await web.submit(chat_id, text)
    if not await web.feed.wait(chat_id, cursor, _REPLY_TIMEOUT_S):
        raise RuntimeError(f"no reply to {chat_id} within {_REPLY_TIMEOUT_S:g} s")


class _Files:
    """Samples this process's resident set and the sizes of the home's database files (SQLite's files)."""

    def __init__(self, runtime: Runtime) -> None:
        if not isinstance(runtime.storage, SqliteStorage):
            raise RuntimeError("bench growth measures the SQLite backend's files (storage.backend: sqlite)")
        paths = runtime.storage.state.paths
        self._db, self._search = paths.db, paths.sidecar

    def sample(self, answered: int) -> dict[str, float]:
        wal = _size(self._db.with_name(self._db.name + "-wal"))
        search = _size(self._search) + _size(self._search.with_name(self._search.name + "-wal"))
        state = _size(self._db)
        return {
            "messages": answered,
            "rss_mb": round(_rss_bytes() / _MB, 2),
            "state_db_mb": round(state / _MB, 2),
            "wal_mb": round(wal / _MB, 2),
            "search_db_mb": round(search / _MB, 2),
            "db_total_mb": round((state + wal + search) / _MB, 2),
        }


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _rss_bytes() -> int:
    """The current resident set (Linux ``/proc``); 0 where that is not available."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0
