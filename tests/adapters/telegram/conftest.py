"""A real python-telegram-bot adapter wired to the loopback fake Bot API, and a recording sink."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from adapters.telegram import TelegramAdapter, create_adapter
from gateway.contracts import InboundMessage
from tests.adapters.fakes.telegram_server import FakeTelegramServer


@dataclass
class RecordingSink:
    """The gateway's side of the contract: stores what it is handed; can be told to refuse."""

    received: list[InboundMessage] = field(default_factory=list)
    offered: list[InboundMessage] = field(default_factory=list)
    refuse: int = 0
    hold: asyncio.Event | None = None

    async def __call__(self, message: InboundMessage) -> None:
        self.offered.append(message)
        if self.hold is not None:
            await self.hold.wait()
        if self.refuse > 0:
            self.refuse -= 1
            raise RuntimeError("state.db is locked")
        self.received.append(message)

    async def wait_for(self, count: int, within_s: float = 10.0) -> list[InboundMessage]:
        await wait_until(lambda: len(self.received) >= count, within_s, f"{count} inbound messages")
        return self.received


async def wait_until(condition: Callable[[], bool], within_s: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def adapter_settings(fake: FakeTelegramServer, **overrides: Any) -> dict[str, Any]:
    return {
        "token": fake.token,
        "api_base_url": fake.api_base_url,
        "file_base_url": fake.file_base_url,
        "poll_timeout_s": 1,
        "stop_grace_s": 2.0,
        **overrides,
    }


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as server:
        yield server


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
async def adapter(fake: FakeTelegramServer, sink: RecordingSink) -> AsyncIterator[TelegramAdapter]:
    telegram = create_adapter(adapter_settings(fake, free_response_chats=["-100555"]))
    async with telegram:
        await telegram.start(sink)
        yield telegram
