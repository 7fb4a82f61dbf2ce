"""Adapter health reaches /metrics and /readyz details: an outage shows while it lasts, then clears."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from adapters.telegram import TelegramAdapter, create_adapter
from gateway.http.metrics import Metrics
from gateway.serving import adapter_detail_probe
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.adapters.telegram.conftest import adapter_settings

ALICE = tg_user(42, "Alice")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as server:
        yield server


def _series(text: str, name: str) -> float | None:
    found = re.search(rf'^{name}{{platform="telegram"}} (\S+)$', text, re.MULTILINE)
    return float(found.group(1)) if found else None


async def test_an_outage_is_visible_in_metrics_and_readiness_until_the_adapter_reconnects(
    fake: FakeTelegramServer,
) -> None:
    sink = RecordingSink()
    telegram: TelegramAdapter = create_adapter(adapter_settings(fake))
    metrics = Metrics()
    metrics.watch_adapters({"telegram": telegram})
    probe = adapter_detail_probe(telegram)
    async with telegram:
        await telegram.start(sink)
        scraped = (await metrics.render()).decode()
        assert _series(scraped, "mnemogate_adapter_connected") == 1.0
        assert _series(scraped, "mnemogate_adapter_last_inbound_timestamp_seconds") is None
        assert (await probe()).startswith("ok")

        fake.fail_next("getUpdates", 502, "Bad Gateway")
        fake.push(fake.message_update(private_chat(ALICE), ALICE, "wake the poll"))
        await wait_until(lambda: not telegram.health().connected, what="the outage to show")
        scraped = (await metrics.render()).decode()
        assert _series(scraped, "mnemogate_adapter_connected") == 0.0
        assert (await probe()).startswith("disconnected: polling failed")

        await sink.wait_for(1)  # the polling loop reconnects with backoff and nothing is lost
        await wait_until(lambda: telegram.health().connected, what="the recovery to show")
        scraped = (await metrics.render()).decode()
        assert _series(scraped, "mnemogate_adapter_connected") == 1.0
        assert _series(scraped, "mnemogate_adapter_last_inbound_timestamp_seconds") is not None
        assert "last inbound" in await probe()
