"""Stopping a real ``mnemogate serve``: open web chat streams end at once, a second signal exits at once."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx
import yaml

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply
from tests.e2e.gateway_process import free_port, start, stop, wait_for_line, wait_healthy

_DRAIN_S = 2


def _write_config(home: Path, **sections: object) -> None:
    config = {"queue": {"drain_grace_s": _DRAIN_S}, "rate_limit": {"enabled": False}, **sections}
    home.joinpath("config.yaml").write_text(yaml.safe_dump(config))


def test_sigterm_ends_an_open_web_chat_stream_and_the_process_exits(home: Path) -> None:
    _write_config(home)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    process = start(home, "serve", "--port", str(port))
    try:
        wait_healthy(base_url, process)
        # The stream's heartbeat comes every 15 s: a read timeout of 8 s fails a stream left open.
        with httpx.Client(base_url=base_url, timeout=httpx.Timeout(5, read=8)) as browser:
            browser.get("/")
            with browser.stream("GET", "/api/chat/stream") as stream:
                chunks = stream.iter_text()
                assert next(chunks).startswith("retry:")
                process.send_signal(signal.SIGTERM)
                stopped_at = time.monotonic()
                rest = "".join(chunks)
            stream_ended_s = time.monotonic() - stopped_at
        code = process.wait(timeout=_DRAIN_S + 10)
        exited_s = time.monotonic() - stopped_at
    finally:
        out = stop(process)
    assert "data:" not in rest
    assert stream_ended_s < 5, out[-3000:]
    assert code == 0 and exited_s < _DRAIN_S + 10, out[-3000:]


async def test_a_second_sigterm_ends_a_long_drain_at_once(home: Path) -> None:
    async with FakeOpenAIServer(default=FakeReply.slow(60, "too late")) as model:
        _write_config(
            home,
            queue={"drain_grace_s": 60},
            model={"provider": "openai", "model": "fake", "base_url": model.base_url, "max_attempts": 1},
        )
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        process = start(home, "serve", "--port", str(port))
        try:
            await asyncio.to_thread(wait_healthy, base_url, process)
            async with httpx.AsyncClient(base_url=base_url, timeout=10) as browser:
                posted = await browser.post("/api/chat/messages", json={"text": "a slow question"})
                assert posted.status_code == 200
            await model.wait_for_requests(1, timeout_s=20)  # the turn is running, for up to 60 s
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(wait_for_line, process, "stopping", 20)
            process.send_signal(signal.SIGTERM)
            forced_at = time.monotonic()
            code = await asyncio.to_thread(process.wait, 10)
            exited_s = time.monotonic() - forced_at
        finally:
            await asyncio.to_thread(stop, process)
    assert code == 128 + signal.SIGTERM
    assert exited_s < 5
