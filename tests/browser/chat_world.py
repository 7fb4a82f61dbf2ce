"""A web chat world for browser tests: a real ``mnemogate serve`` on a temporary home whose model is the
fake OpenAI-compatible server (streaming, on loopback, in a thread of the test process).

The fake answers each model request with the next scripted ``FakeReply`` (``say`` streams in chunks with a
delay between them) and records every request, so a test reads the exact system prompt a turn sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply, RecordedRequest
from tests.e2e.gateway_process import free_port, start, stop, wait_healthy

MODEL_KEY = "sk-fake-browser-tests"


class ThreadedFakeModel:
    """``FakeOpenAIServer`` served from its own event loop in a daemon thread, for sync tests."""

    def __init__(self) -> None:
        self.server = FakeOpenAIServer(api_key=MODEL_KEY, default=FakeReply.say("ok"))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-model", daemon=True)

    def __enter__(self) -> ThreadedFakeModel:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self._loop).result(15)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.__aexit__(None, None, None), self._loop).result(15)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def script(self, *replies: FakeReply) -> None:
        self._loop.call_soon_threadsafe(self.server.script, *replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        return list(self.server.requests)

    def system_prompts(self) -> list[str]:
        """The system message of every chat-completion request so far, oldest first."""
        prompts = []
        for request in self.requests:
            messages = request.body.get("messages")
            if request.path.endswith("/chat/completions") and isinstance(messages, list) and messages:
                first = messages[0]
                if isinstance(first, dict) and first.get("role") == "system":
                    prompts.append(str(first.get("content")))
        return prompts


@dataclass
class ChatWorld:
    """The served gateway (restartable on the same home and port) and its fake model."""

    home: Path
    model: ThreadedFakeModel
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def configure(self) -> None:
        config = {
            "model": {
                "provider": "openai",
                "model": "fake-model",
                "base_url": self.model.server.base_url,
                "api_key": MODEL_KEY,
            },
            "rate_limit": {"enabled": False},
        }
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "config.yaml").write_text(json.dumps(config))  # JSON is YAML

    def start(self) -> None:
        self.process = start(self.home, "serve", "--port", str(self.port))
        wait_healthy(self.url, self.process)

    def stop(self) -> str:
        out = stop(self.process) if self.process is not None else ""
        self.process = None
        return out


@contextlib.contextmanager
def chat_world(home: Path) -> Iterator[ChatWorld]:
    with ThreadedFakeModel() as model:
        world = ChatWorld(home, model)
        world.configure()
        world.start()
        try:
            yield world
        finally:
            world.stop()


def eventually(check: object, what: str, within_s: float = 10.0) -> None:
    """Poll ``check()`` until true, within a deadline (never a sleep as synchronisation)."""
    assert callable(check)
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
