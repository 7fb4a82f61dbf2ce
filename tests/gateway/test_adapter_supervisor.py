"""A platform that is unreachable at start-up: the gateway keeps retrying and connects once it is back.

The real python-telegram-bot adapter against the fake Bot API, brought up on a fixed port only after the
adapter's first start failed.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from adapters.telegram import create_adapter
from gateway.adapter_supervisor import SupervisedAdapter
from gateway.contracts import AdapterConfigError
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.adapters.telegram.conftest import adapter_settings
from tests.e2e.gateway_process import free_port

ALICE = tg_user(4242, "Alice")


async def test_an_unreachable_platform_is_retried_with_backoff_until_it_answers() -> None:
    port = free_port()
    later = FakeTelegramServer(port=port)
    sink = RecordingSink()
    supervised = SupervisedAdapter(create_adapter(adapter_settings(later)), initial_s=0.05, max_s=0.2)
    async with supervised:
        await supervised.start(sink)  # does not raise: Telegram is merely away
        down = supervised.health()
        assert not down.connected
        assert down.detail.startswith("not started: telegram is unreachable")
        assert "next attempt in" in down.detail
        async with later as fake:
            await wait_until(lambda: supervised.health().connected, 10.0, "the adapter to connect")
            assert supervised.health().detail.startswith("polling as @")
            fake.push(fake.message_update(private_chat(ALICE), ALICE, "are you there?"))
            (message,) = await sink.wait_for(1)
            assert message.text == "are you there?"
    assert not supervised.health().connected


async def test_a_rejected_token_still_stops_start_up_at_once() -> None:
    async with FakeTelegramServer() as fake:
        settings = adapter_settings(fake, token="999:WRONG")
        supervised = SupervisedAdapter(create_adapter(settings), initial_s=0.05, max_s=0.2)
        async with supervised:
            with pytest.raises(AdapterConfigError, match="TELEGRAM_BOT_TOKEN"):
                await supervised.start(RecordingSink())
        assert fake.calls_of("getUpdates") == []


async def test_stopping_while_retrying_ends_the_retries() -> None:
    port = free_port()
    never = FakeTelegramServer(port=port)
    supervised = SupervisedAdapter(create_adapter(adapter_settings(never)), initial_s=0.05, max_s=0.1)
    async with supervised:
        await supervised.start(RecordingSink())
    # Telegram comes up after the gateway stopped: for ten retry intervals nothing calls it.
    async with never as fake:
        deadline = time.monotonic() + 10 * 0.1
        while time.monotonic() < deadline:  # a window for an absence, not a synchronisation
            assert fake.calls_of("getMe") == []
            await asyncio.sleep(0.02)
        assert not supervised.health().connected


async def test_an_adapter_stuck_disconnected_is_restarted_by_the_watchdog() -> None:
    async with FakeTelegramServer() as fake:
        sink = RecordingSink()
        telegram = create_adapter(adapter_settings(fake))
        supervised = SupervisedAdapter(telegram, initial_s=0.05, max_s=0.2, restart_after_s=0.4)
        async with supervised:
            await supervised.start(sink)
            # Another poller took over the bot: every getUpdates now fails and the adapter says so.
            for _ in range(1000):
                fake.fail_next("getUpdates", 409, "Conflict: terminated by other getUpdates request")
            await wait_until(lambda: not supervised.health().connected, 10.0, "the outage to show")
            await wait_until(lambda: supervised.restarts >= 1, 10.0, "the watchdog to restart it")
            # A fresh start (getMe again), not only the library's own polling retries.
            await wait_until(lambda: len(fake.calls_of("getMe")) >= 2, 10.0, "a fresh start")
            fake.clear_failures()
            await wait_until(lambda: supervised.health().connected, 10.0, "the adapter to reconnect")
            fake.push(fake.message_update(private_chat(ALICE), ALICE, "still there?"))
            (message,) = await sink.wait_for(1)
            assert message.text == "still there?"


async def test_an_unexpected_error_while_starting_is_retried_not_fatal() -> None:
    async with FakeTelegramServer() as fake:
        # getMe works, then polling cannot start: the library raises its own error, not ours.
        fake.fail_next("deleteWebhook", 500, "Internal Server Error")
        fake.fail_next("getUpdates", 500, "Internal Server Error")
        sink = RecordingSink()
        supervised = SupervisedAdapter(create_adapter(adapter_settings(fake)), initial_s=0.05, max_s=0.2)
        async with supervised:
            await supervised.start(sink)
            await wait_until(lambda: supervised.health().connected, 10.0, "the adapter to connect")
            fake.push(fake.message_update(private_chat(ALICE), ALICE, "made it"))
            (message,) = await sink.wait_for(1)
            assert message.text == "made it"
