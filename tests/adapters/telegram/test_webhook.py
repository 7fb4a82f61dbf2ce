"""Webhook mode: Telegram POSTs updates to our own HTTP app; the secret token is required and checked."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from adapters.telegram import TelegramAdapter, create_adapter
from gateway.contracts import AdapterConfigError
from tests.adapters.fakes.gateway_http import serve_routes as serve
from tests.adapters.fakes.recording_sink import RecordingSink
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.adapters.telegram.conftest import adapter_settings

SECRET = "s3cret-Token_1"
ALICE = tg_user(42, "Alice")


@pytest.fixture
async def hooked(fake: FakeTelegramServer, sink: RecordingSink) -> AsyncIterator[tuple[str, TelegramAdapter]]:
    settings = adapter_settings(
        fake, mode="webhook", webhook_secret=SECRET, webhook_url="https://bot.example.org/webhooks/telegram"
    )
    async with create_adapter(settings) as adapter:
        await adapter.start(sink)
        async with serve(adapter) as base_url:
            yield base_url, adapter


async def test_start_registers_the_webhook_with_its_secret_and_keeps_pending_updates(
    fake: FakeTelegramServer, hooked: tuple[str, TelegramAdapter]
) -> None:
    [call] = fake.calls_of("setWebhook")
    assert call.params["url"] == "https://bot.example.org/webhooks/telegram"
    assert call.params["secret_token"] == SECRET
    assert not call.params.get("drop_pending_updates")
    assert fake.calls_of("getUpdates") == []  # no polling in webhook mode


async def test_an_update_with_the_right_secret_is_accepted_before_telegram_gets_200(
    fake: FakeTelegramServer, sink: RecordingSink, hooked: tuple[str, TelegramAdapter]
) -> None:
    base_url, adapter = hooked
    update = fake.message_update(private_chat(ALICE), ALICE, "via webhook")
    async with httpx.AsyncClient(base_url=base_url) as client:
        answer = await client.post(
            "/webhooks/telegram", json=update, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
        )
    assert answer.status_code == 200
    [message] = sink.received  # stored before the answer: Telegram never sees 200 for a lost update
    assert message.event_id == str(update["update_id"]) and message.text == "via webhook"
    assert adapter.health().connected and adapter.health().last_inbound_at is not None


@pytest.mark.parametrize(
    "headers", [{}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}], ids=["missing", "wrong"]
)
async def test_an_update_without_the_right_secret_is_refused(
    fake: FakeTelegramServer,
    sink: RecordingSink,
    hooked: tuple[str, TelegramAdapter],
    headers: dict[str, str],
) -> None:
    base_url, _ = hooked
    update = fake.message_update(private_chat(ALICE), ALICE, "spoofed")
    async with httpx.AsyncClient(base_url=base_url) as client:
        answer = await client.post("/webhooks/telegram", json=update, headers=headers)
    assert answer.status_code == 403
    assert sink.received == []


async def test_an_update_the_gateway_cannot_store_gets_an_error_so_telegram_redelivers(
    fake: FakeTelegramServer, sink: RecordingSink, hooked: tuple[str, TelegramAdapter]
) -> None:
    base_url, _ = hooked
    sink.refuse = 1
    update = fake.message_update(private_chat(ALICE), ALICE, "retry me")
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    async with httpx.AsyncClient(base_url=base_url) as client:
        first = await client.post("/webhooks/telegram", json=update, headers=headers)
        second = await client.post("/webhooks/telegram", json=update, headers=headers)
    assert (first.status_code, second.status_code) == (503, 200)
    assert [m.event_id for m in sink.received] == [str(update["update_id"])]


@pytest.mark.parametrize("secret", [None, "", "has spaces"], ids=["none", "empty", "invalid"])
def test_webhook_mode_without_a_valid_secret_is_a_configuration_error(secret: str | None) -> None:
    with pytest.raises(AdapterConfigError, match="secret"):
        create_adapter({"token": "1:abc", "mode": "webhook", "webhook_secret": secret})


def test_an_empty_token_is_a_configuration_error() -> None:
    with pytest.raises(AdapterConfigError, match="TELEGRAM_BOT_TOKEN"):
        create_adapter({"token": ""})


def test_polling_mode_serves_no_routes() -> None:
    assert create_adapter({"token": "1:abc"}).http_routes() == ()
