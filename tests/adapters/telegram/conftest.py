"""A real python-telegram-bot adapter wired to the loopback fake Bot API, and a recording sink."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.telegram import TelegramAdapter, create_adapter
from tests.adapters.fakes.recording_sink import RecordingSink
from tests.adapters.fakes.telegram_server import FakeTelegramServer


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
