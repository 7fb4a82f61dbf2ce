"""Helpers for gateway multi-process tests: start/stop worker processes, enqueue, read back the outcome."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agent_core.actor import Actor
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.queue import BusyPolicy, Signals, TurnQueue
from gateway.sessions import KeyScope, SessionKey
from gateway.storage.sqlite import SqliteStorage

_REPO = Path(__file__).resolve().parents[2]


def write_config(home: Path, config: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@dataclass
class Worker:
    process: subprocess.Popen[str]

    @property
    def pid(self) -> int:
        return self.process.pid


def start_worker(home: Path, timeout: float = 30.0) -> Worker:
    """Start a worker process and wait for its ready line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.multiprocess.gateway_worker", str(home)],
        cwd=_REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(_REPO)},
    )
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if "ready" in line:
            return Worker(process)
        if not line and process.poll() is not None:
            break
    process.kill()
    _, err = process.communicate(timeout=10)
    raise AssertionError(f"worker did not start: {err[-2000:]}")


def stop_worker(worker: Worker, timeout: float = 20.0) -> int:
    if worker.process.poll() is None:
        worker.process.terminate()
    try:
        return worker.process.wait(timeout)
    except subprocess.TimeoutExpired:
        worker.process.kill()
        worker.process.wait(10)
        raise AssertionError("worker did not stop on SIGTERM") from None


def message(conversation: int, n: int) -> tuple[InboundMessage, SessionKey, Actor]:
    user = f"u{conversation}"
    chat = ChatRef("test", f"dm-{user}", ChatKind.DM)
    inbound = InboundMessage(
        event_id=f"{conversation}-{n}",
        chat=chat,
        sender=UserRef("test", user),
        text=f"message {n} of conversation {conversation}",
        message_id=f"{conversation}-{n}",
    )
    return (
        inbound,
        SessionKey("test", KeyScope.DM, chat.chat_id),
        Actor(f"p{conversation}", platform=inbound.platform, account_id=inbound.sender.user_id),
    )


def queue_for(storage: SqliteStorage) -> TurnQueue:
    return TurnQueue(storage.queue, Signals(), BusyPolicy.named("queue"))
