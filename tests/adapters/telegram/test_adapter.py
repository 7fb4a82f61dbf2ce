"""The Telegram adapter end to end: real python-telegram-bot against the fake Bot API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging

import pytest

from adapters.telegram import TelegramAdapter, create_adapter
from gateway.contracts import (
    AdapterConfigError,
    BadFormatError,
    ChatKind,
    ChatRef,
    OutboundMessage,
    SendError,
)
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until
from tests.adapters.fakes.telegram_server import (
    FakeTelegramServer,
    group_chat,
    private_chat,
    telegram_html_text,
    tg_user,
)
from tests.adapters.telegram.conftest import adapter_settings

ALICE = tg_user(42, "Alice", "alice")
BOB = tg_user(77, "Bob")
BOOK_CLUB = group_chat(-100123, "Book club")
FORUM = group_chat(-100999, "Engineering", forum=True)
DM_CHAT = ChatRef("telegram", "42", ChatKind.DM)


async def test_a_private_message_reaches_the_gateway_and_the_reply_lands_in_the_dm(
    fake: FakeTelegramServer, sink: RecordingSink, adapter: TelegramAdapter
) -> None:
    update_id = fake.push(fake.message_update(private_chat(ALICE), ALICE, "hello there"))
    [message] = await sink.wait_for(1)
    assert (message.event_id, message.text, message.chat.kind) == (str(update_id), "hello there", ChatKind.DM)
    assert message.mentions_bot and message.sender.user_id == "42"

    [chunk] = adapter.render("Hi **Alice**!")
    receipt = await adapter.send(OutboundMessage(message.chat, chunk, "reply-1"))
    [call] = await fake.wait_for_call("sendMessage")
    assert call.params["chat_id"] == 42 and call.params["parse_mode"] == "HTML"
    assert telegram_html_text(call.params["text"]) == "Hi Alice!"
    assert receipt.platform_message_id
    assert adapter.health().last_send_at is not None and adapter.health().last_inbound_at is not None


async def test_group_messages_are_flagged_only_when_the_bot_is_mentioned_or_replied_to(
    fake: FakeTelegramServer, sink: RecordingSink, adapter: TelegramAdapter
) -> None:
    fake.push(fake.message_update(BOOK_CLUB, BOB, "I think it was Dune."))
    fake.push(fake.message_update(BOOK_CLUB, BOB, "@mnemo_bot what did we read?"))
    bot_said = fake.message_update(BOOK_CLUB, fake.bot, "You read Dune.")["message"]
    fake.push(fake.message_update(BOOK_CLUB, BOB, "and before?", reply_to=bot_said))
    fake.push(fake.message_update(group_chat(-100555, "Free"), BOB, "anyone here?"))
    plain, mentioned, reply, free = await sink.wait_for(4)
    assert plain.chat.kind == ChatKind.GROUP and not plain.mentions_bot and not plain.replies_to_bot
    assert mentioned.mentions_bot
    assert reply.replies_to_bot and reply.reply_to_message_id == str(bot_said["message_id"])
    assert free.mentions_bot  # a configured free-response chat addresses the bot with every message


async def test_a_forum_topic_message_is_a_thread_and_the_reply_lands_in_the_same_topic(
    fake: FakeTelegramServer, sink: RecordingSink, adapter: TelegramAdapter
) -> None:
    fake.push(fake.message_update(FORUM, BOB, "@mnemo_bot status?", thread_id=77))
    [message] = await sink.wait_for(1)
    assert message.chat.kind == ChatKind.THREAD and message.chat.thread_id == "77"
    await adapter.typing(message.chat)
    await adapter.send(
        OutboundMessage(message.chat, "All green.", "t-1", reply_to_message_id=message.message_id)
    )
    [typing] = await fake.wait_for_call("sendChatAction")
    [sent] = await fake.wait_for_call("sendMessage")
    assert typing.params["message_thread_id"] == 77 and typing.params["action"] == "typing"
    assert sent.params["message_thread_id"] == 77 and sent.params["chat_id"] == -100999
    assert sent.params["reply_parameters"]["message_id"] == int(message.message_id or 0)


async def test_a_10000_character_reply_goes_out_as_valid_chunks_with_the_code_block_intact(
    fake: FakeTelegramServer, sink: RecordingSink, adapter: TelegramAdapter
) -> None:
    fake.push(fake.message_update(private_chat(ALICE), ALICE, "explain"))
    [message] = await sink.wait_for(1)
    code = "\n".join(f"total += item[{i}] if a < b else 0" for i in range(60))
    prose = " ".join(f"sentence{i}." for i in range(900))
    reply = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(reply) >= 10_000
    chunks = adapter.render(reply)
    for index, chunk in enumerate(chunks):
        await adapter.send(OutboundMessage(message.chat, chunk, f"long#{index}"))
    calls = await fake.wait_for_call("sendMessage", count=len(chunks))
    assert len(chunks) >= 3
    visible = [telegram_html_text(call.params["text"]) for call in calls]  # the fake accepted every one
    with_code = [call.params["text"] for call in calls if "language-python" in call.params["text"]]
    assert len(with_code) == 1 and with_code[0].count("total += item") == 60
    assert "".join(visible).count("sentence899.") == 2


async def test_flood_control_429_raises_a_retryable_send_error_with_retry_after(
    fake: FakeTelegramServer, adapter: TelegramAdapter
) -> None:
    fake.fail_next("sendMessage", 429, "Too Many Requests: retry after 7", retry_after=7)
    with pytest.raises(SendError) as caught:
        await adapter.send(OutboundMessage(DM_CHAT, "hello", "flood-1"))
    assert caught.value.retryable and caught.value.retry_after == 7.0 and caught.value.kind == "rate_limited"
    await adapter.send(OutboundMessage(DM_CHAT, "hello", "flood-1"))  # the retry goes through


async def test_a_rejected_format_raises_bad_format_and_the_plain_resend_is_sent_without_parse_mode(
    fake: FakeTelegramServer, adapter: TelegramAdapter
) -> None:
    fake.fail_next("sendMessage", 400, "Bad Request: can't parse entities: Unsupported start tag")
    with pytest.raises(BadFormatError):
        await adapter.send(OutboundMessage(DM_CHAT, "<b>x</b>", "fmt-1"))
    await adapter.send(OutboundMessage(DM_CHAT, "a < b & c", "fmt-1"))
    first, second = await fake.wait_for_call("sendMessage", count=2)
    assert first.params["parse_mode"] == "HTML" and "parse_mode" not in second.params
    assert second.params["text"] == "a < b & c"


async def test_other_rejections_map_to_final_send_errors(
    fake: FakeTelegramServer, adapter: TelegramAdapter
) -> None:
    fake.fail_next("sendMessage", 403, "Forbidden: bot was blocked by the user")
    with pytest.raises(SendError) as caught:
        await adapter.send(OutboundMessage(DM_CHAT, "hi", "blocked"))
    assert not caught.value.retryable and caught.value.kind == "forbidden"


async def test_edit_replaces_the_text_and_an_unchanged_edit_is_not_an_error(
    fake: FakeTelegramServer, adapter: TelegramAdapter
) -> None:
    receipt = await adapter.send(OutboundMessage(DM_CHAT, "draft", "e-1"))
    await adapter.edit(DM_CHAT, receipt.platform_message_id, "<b>final</b>")
    [edit] = await fake.wait_for_call("editMessageText")
    assert (
        edit.params["message_id"] == int(receipt.platform_message_id)
        and edit.params["text"] == "<b>final</b>"
    )
    fake.fail_next("editMessageText", 400, "Bad Request: message is not modified")
    await adapter.edit(DM_CHAT, receipt.platform_message_id, "<b>final</b>")


async def test_the_same_update_delivered_twice_reaches_the_gateway_twice_with_one_event_id(
    fake: FakeTelegramServer, sink: RecordingSink, adapter: TelegramAdapter
) -> None:
    update = fake.message_update(private_chat(ALICE), ALICE, "only once please")
    # Telegram re-sends an update it holds unconfirmed (e.g. after our crash before the confirmation);
    # both copies sit in the queue before the adapter polls, so the outcome does not depend on timing.
    fake.push(update)
    fake.push(update)
    first, second = await sink.wait_for(2)
    assert first.event_id == second.event_id == str(update["update_id"])  # the gateway's ledger dedupes


async def test_pending_updates_survive_a_cold_start_and_none_is_dropped(
    fake: FakeTelegramServer, sink: RecordingSink
) -> None:
    waiting = [
        fake.push(fake.message_update(private_chat(ALICE), ALICE, f"sent while down {i}")) for i in range(3)
    ]
    async with create_adapter(adapter_settings(fake)) as telegram:
        await telegram.start(sink)
        received = await sink.wait_for(3)
    assert [m.event_id for m in received] == [str(i) for i in waiting]
    [delete_webhook] = fake.calls_of("deleteWebhook")
    assert delete_webhook.params.get("drop_pending_updates") in (None, False)
    assert fake.pending_update_ids == []  # confirmed on the way out, after the gateway accepted them


async def test_an_update_is_confirmed_to_telegram_only_after_the_gateway_accepted_it(
    fake: FakeTelegramServer, sink: RecordingSink
) -> None:
    sink.hold = asyncio.Event()
    async with create_adapter(adapter_settings(fake)) as telegram:
        await telegram.start(sink)
        update_id = fake.push(fake.message_update(private_chat(ALICE), ALICE, "slow to store"))
        try:
            await wait_until(lambda: len(sink.offered) == 1, what="the update to be handed over")
            # An observation window (not synchronisation): a premature confirming poll would happen in it.
            await asyncio.sleep(0.3)
            pending_while_storing = fake.pending_update_ids
            offsets = [int(c.params.get("offset") or 0) for c in fake.calls_of("getUpdates")]
        finally:
            sink.hold.set()
        assert pending_while_storing == [update_id]  # still held by Telegram: a crash now loses nothing
        assert max(offsets) <= update_id
        polls_before = len(offsets)
        await sink.wait_for(1)
        await wait_until(lambda: fake.pending_update_ids == [], what="the confirmation")
        assert len(fake.calls_of("getUpdates")) > polls_before


async def test_an_update_the_gateway_failed_to_store_is_fetched_again(
    fake: FakeTelegramServer, sink: RecordingSink
) -> None:
    sink.refuse = 1
    async with create_adapter(adapter_settings(fake)) as telegram:
        await telegram.start(sink)
        update_id = fake.push(fake.message_update(private_chat(ALICE), ALICE, "store me"))
        [message] = await sink.wait_for(1)
    assert message.event_id == str(update_id)
    assert [m.event_id for m in sink.offered] == [str(update_id)] * 2  # refused once, then fetched again


async def test_nothing_reaches_the_gateway_after_stop(fake: FakeTelegramServer, sink: RecordingSink) -> None:
    telegram = create_adapter(adapter_settings(fake))
    await telegram.start(sink)
    fake.push(fake.message_update(private_chat(ALICE), ALICE, "before"))
    await sink.wait_for(1)
    await telegram.stop()
    assert not telegram.health().connected
    fake.push(fake.message_update(private_chat(ALICE), ALICE, "after"))
    polls = len(fake.calls_of("getUpdates"))
    assert len(sink.received) == 1 and len(fake.calls_of("getUpdates")) == polls
    assert len(fake.pending_update_ids) == 1  # kept for the next start


async def test_the_bot_token_never_appears_in_logs(
    fake: FakeTelegramServer, sink: RecordingSink, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.fail_next("sendMessage", 400, "Bad Request: chat not found")
    async with create_adapter(adapter_settings(fake)) as telegram:
        await telegram.start(sink)
        fake.push(fake.message_update(private_chat(ALICE), ALICE, "hi"))
        await sink.wait_for(1)
        with pytest.raises(SendError):
            await telegram.send(OutboundMessage(DM_CHAT, "x", "k"))
    assert fake.token not in caplog.text
    assert all(fake.token not in str(record.args) for record in caplog.records)


async def test_a_rejected_token_stops_start_up_with_a_clear_error(fake: FakeTelegramServer) -> None:
    telegram = create_adapter(adapter_settings(fake, token="999:WRONG"))
    with pytest.raises(AdapterConfigError, match="token") as caught:
        await telegram.start(RecordingSink())
    assert "999:WRONG" not in str(caught.value)


async def test_a_polling_outage_shows_in_health_until_polling_works_again(
    fake: FakeTelegramServer, sink: RecordingSink, adapter: TelegramAdapter
) -> None:
    assert adapter.health().connected
    fake.fail_next("getUpdates", 502, "Bad Gateway")
    fake.push(fake.message_update(private_chat(ALICE), ALICE, "wake the poll"))
    await wait_until(lambda: not adapter.health().connected, what="the outage to show")
    assert "polling failed" in adapter.health().detail
    await sink.wait_for(1)  # PTB's retry loop reconnects and nothing is lost
    await wait_until(lambda: adapter.health().connected, what="the recovery to show")


def test_the_entry_point_target_builds_the_adapter() -> None:
    from importlib.metadata import EntryPoint

    from gateway.contracts import ENTRY_POINT_GROUP

    entry = EntryPoint("telegram", "adapters.telegram:create_adapter", ENTRY_POINT_GROUP)
    built = entry.load()({"token": "1:abc"})
    assert isinstance(built, TelegramAdapter) and built.name == "telegram"


async def test_an_update_the_gateway_could_not_store_stays_at_telegram_when_polling_stops(
    fake: FakeTelegramServer, sink: RecordingSink
) -> None:
    """The database is away and the adapter is stopped (its lease lost): the update is left for the next
    owner, never confirmed by the stop's last ``getUpdates``."""
    sink.refuse = 1_000
    telegram = create_adapter(adapter_settings(fake))
    await telegram.start(sink)
    update_id = fake.push(fake.message_update(private_chat(ALICE), ALICE, "while the database is away"))
    await wait_until(lambda: len(sink.offered) >= 2, what="two failed hand-offs")
    await telegram.stop()
    assert fake.pending_update_ids == [update_id]
    sink.refuse = 0
    await telegram.start(sink)
    [message] = await sink.wait_for(1)
    await telegram.stop()
    assert message.event_id == str(update_id)
