"""Who a Telegram message is addressed to: the bot, another bot, or nobody."""

from __future__ import annotations

from typing import Any

from telegram import Update

from adapters.telegram import BotIdentity, update_to_inbound
from gateway.contracts import ChatKind
from tests.adapters.fakes.telegram_server import FakeTelegramServer, group_chat, private_chat, tg_user

BOT = BotIdentity(123456, "mnemo_bot")
BOB = tg_user(77, "Bob")
GROUP = group_chat(-100123, "Book club")


def convert(update: dict[str, Any], free: frozenset[str] = frozenset()) -> Any:
    return update_to_inbound(Update.de_json(update, None), BOT, free)


def test_a_mention_of_another_bot_does_not_address_this_one() -> None:
    builder = FakeTelegramServer()
    update = builder.message_update(
        GROUP, BOB, "@other_bot hi", entities=[{"type": "mention", "offset": 0, "length": 10}]
    )
    assert not convert(update).mentions_bot


def test_a_command_for_another_bot_keeps_its_suffix_and_is_not_addressed() -> None:
    text = "/new@other_bot"
    update = FakeTelegramServer().message_update(
        GROUP, BOB, text, entities=[{"type": "bot_command", "offset": 0, "length": len(text)}]
    )
    message = convert(update)
    assert message.text == text and not message.mentions_bot


def test_the_username_match_ignores_case() -> None:
    update = FakeTelegramServer().message_update(
        GROUP, BOB, "@Mnemo_Bot hi", entities=[{"type": "mention", "offset": 0, "length": 10}]
    )
    assert convert(update).mentions_bot


def test_free_response_chats_address_the_bot_with_every_message() -> None:
    update = FakeTelegramServer().message_update(GROUP, BOB, "anyone?")
    assert not convert(update).mentions_bot
    assert convert(update, frozenset({"-100123"})).mentions_bot


def test_a_private_chat_is_a_dm_and_always_addressed() -> None:
    update = FakeTelegramServer().message_update(private_chat(BOB), BOB, "hi")
    message = convert(update)
    assert message.chat.kind == ChatKind.DM and message.mentions_bot


def test_an_update_without_a_message_is_not_a_message() -> None:
    assert convert({"update_id": 5, "callback_query": {"id": "1", "from": BOB, "chat_instance": "x"}}) is None
