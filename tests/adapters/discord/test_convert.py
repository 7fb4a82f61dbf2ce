"""Discord message -> InboundMessage, through discord.py's own gateway parsing (offline replay)."""

from __future__ import annotations

import copy
from typing import Any

from adapters.discord import BotIdentity, DiscordSettings, create_adapter, message_to_inbound
from gateway.contracts import ChatKind, InboundMessage
from gateway.delivery.settings import AdapterSettings
from tests.adapters.fakes.discord_server import FakeDiscordServer, guild_payload, replay_message, user_payload

FAKE = FakeDiscordServer()
BOT = BotIdentity(FAKE.bot_id, "mnemo")
GUILD = guild_payload(FAKE.guild_id, FAKE.bot, FAKE.channel_id, FAKE.thread_id)
ALICE = user_payload(42, "alice")


def convert(
    message: dict[str, Any],
    *,
    guild: bool = True,
    free: frozenset[str] = frozenset(),
    guild_data: dict[str, Any] | None = None,
) -> InboundMessage | None:
    payload = {"bot": FAKE.bot, "guild": (guild_data or GUILD) if guild else None, "message": message}
    return message_to_inbound(replay_message(payload), BOT, free)


def test_the_bot_mention_is_removed_and_other_mentions_read_as_names() -> None:
    message = FAKE.message(ALICE, "ask <@77> about it", mention_bot=True)
    message["mentions"].append(user_payload(77, "bob"))
    inbound = convert(message)
    assert inbound is not None and inbound.text == "ask @Bob about it" and inbound.mentions_bot


def test_a_configured_free_response_channel_addresses_the_bot_without_a_mention() -> None:
    inbound = convert(FAKE.message(ALICE, "anyone?"), free=frozenset({str(FAKE.channel_id)}))
    assert inbound is not None and inbound.mentions_bot and inbound.chat.kind == ChatKind.GROUP


def test_system_messages_and_empty_messages_are_not_for_the_bot() -> None:
    joined = FAKE.message(ALICE, "")
    joined["type"] = 7  # "alice joined the server"
    assert convert(joined) is None
    assert convert(FAKE.message(ALICE, f"<@{FAKE.bot_id}>")) is None  # nothing but the mention


def test_a_thread_in_an_unknown_guild_still_has_its_guild_as_workspace() -> None:
    inbound = convert(FAKE.message(ALICE, "hi", channel_id=123456789), guild=True)
    assert inbound is not None and inbound.chat.workspace == str(FAKE.guild_id)


def test_event_id_is_the_message_id_and_stable() -> None:
    message = FAKE.message(ALICE, "same", channel_id=600, guild=False)
    first, second = convert(message, guild=False), convert(message, guild=False)
    assert first is not None and first == second and first.event_id == message["id"] == first.message_id


def test_the_factory_takes_the_gateways_adapter_settings() -> None:
    settings = AdapterSettings.model_validate({"enabled": True, "token": "T.O.K", "auto_thread": True})
    adapter = create_adapter(settings)
    assert adapter.name == "discord"
    assert "T.O.K" not in repr(DiscordSettings(token="T.O.K"))  # type: ignore[arg-type]


def test_a_plain_message_in_a_thread_the_bot_opened_is_addressed_to_it() -> None:
    own = copy.deepcopy(GUILD)
    own["threads"][0]["owner_id"] = str(FAKE.bot_id)
    in_own = convert(FAKE.message(ALICE, "and then?", channel_id=FAKE.thread_id), guild_data=own)
    assert in_own is not None and in_own.chat.kind == ChatKind.THREAD and in_own.replies_to_bot
    elsewhere = convert(FAKE.message(ALICE, "and then?", channel_id=FAKE.thread_id))  # alice's thread
    assert elsewhere is not None and not (elsewhere.replies_to_bot or elsewhere.mentions_bot)
