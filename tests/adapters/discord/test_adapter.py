"""The Discord adapter end to end: real discord.py against the fake REST API and gateway on 127.0.0.1."""

from __future__ import annotations

import logging
import re

import pytest

from adapters.discord import DiscordAdapter, create_adapter
from gateway.contracts import AdapterConfigError, ChatKind, InboundMessage, OutboundMessage, SendError
from tests.adapters.discord.conftest import adapter_settings
from tests.adapters.fakes.discord_server import FakeDiscordServer, user_payload
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until

ALICE = user_payload(42, "alice")
BOB = user_payload(77, "bob")
OTHER_BOT = user_payload(55, "otherbot", bot=True)
DM_CHANNEL = 600000000000000001


async def test_a_direct_message_reaches_the_gateway_and_the_reply_lands_in_the_dm(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    said = fake.message(ALICE, "hello there", channel_id=DM_CHANNEL, guild=False)
    await fake.dispatch("MESSAGE_CREATE", said)
    [message] = await sink.wait_for(1)
    assert (message.event_id, message.text, message.chat.kind) == (said["id"], "hello there", ChatKind.DM)
    assert message.mentions_bot and message.sender.user_id == "42" and message.chat.workspace is None

    await adapter.typing(message.chat)
    [chunk] = adapter.render("Hi **Alice**!")
    receipt = await adapter.send(OutboundMessage(message.chat, chunk, "reply-1"))
    [typing] = await fake.wait_for_call("typing")
    [sent] = await fake.wait_for_call("create_message")
    assert typing.channel_id == sent.channel_id == DM_CHANNEL
    assert sent.body["content"] == "Hi **Alice**!" and receipt.platform_message_id
    assert fake.identified[0]["intents"] & (1 << 15), "the message-content intent is requested"
    health = adapter.health()
    assert health.connected and health.last_send_at is not None and health.last_inbound_at is not None


async def test_guild_messages_are_flagged_only_when_the_bot_is_mentioned_or_replied_to(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    bot_said = fake.message(fake.bot, "You read Dune.")
    await fake.dispatch("MESSAGE_CREATE", fake.message(BOB, "I think it was Dune."))
    await fake.dispatch("MESSAGE_CREATE", fake.message(BOB, "what did we read?", mention_bot=True))
    await fake.dispatch("MESSAGE_CREATE", fake.message(BOB, "and before?", reply_to=bot_said))
    plain, mentioned, reply = await sink.wait_for(3)
    assert plain.chat.kind == ChatKind.GROUP and not plain.mentions_bot and not plain.replies_to_bot
    assert plain.chat.workspace == str(fake.guild_id) and plain.chat.chat_id == str(fake.channel_id)
    assert mentioned.mentions_bot and mentioned.text == "what did we read?"
    assert reply.replies_to_bot and reply.reply_to_message_id == bot_said["id"]


async def test_the_bots_own_and_other_bots_messages_are_ignored(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    await fake.dispatch("MESSAGE_CREATE", fake.message(fake.bot, "my own echo", mention_bot=True))
    await fake.dispatch("MESSAGE_CREATE", fake.message(OTHER_BOT, "beep", mention_bot=True))
    await fake.dispatch("MESSAGE_CREATE", fake.message(ALICE, "a person", mention_bot=True))
    [message] = await sink.wait_for(1)
    assert message.text == "a person"
    assert [m.sender.user_id for m in sink.received] == ["42"]


async def test_a_thread_message_is_a_thread_chat_and_the_reply_lands_in_the_same_thread(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    said = fake.message(BOB, "status?", channel_id=fake.thread_id, mention_bot=True)
    await fake.dispatch("MESSAGE_CREATE", said)
    [message] = await sink.wait_for(1)
    assert message.chat.kind == ChatKind.THREAD
    assert (message.chat.chat_id, message.chat.thread_id) == (str(fake.channel_id), str(fake.thread_id))
    await adapter.typing(message.chat)
    await adapter.send(
        OutboundMessage(message.chat, "All green.", "t-1", reply_to_message_id=message.message_id)
    )
    [typing] = await fake.wait_for_call("typing")
    [sent] = await fake.wait_for_call("create_message")
    assert typing.channel_id == sent.channel_id == fake.thread_id
    assert sent.body["message_reference"]["message_id"] == int(said["id"])
    assert sent.body["allowed_mentions"]["parse"] == []  # the model's text never pings anyone


async def test_a_top_level_mention_opens_a_thread_when_auto_thread_is_on(fake: FakeDiscordServer) -> None:
    sink = RecordingSink()
    async with create_adapter(adapter_settings(fake, auto_thread=True)) as adapter:
        await adapter.start(sink)
        said = fake.message(ALICE, "plan the release", mention_bot=True)
        await fake.dispatch("MESSAGE_CREATE", said)
        [message] = await sink.wait_for(1)
        [opened] = await fake.wait_for_call("start_thread")
        assert opened.channel_id == fake.channel_id and opened.body["name"] == "plan the release"
        assert message.chat.kind == ChatKind.THREAD and message.chat.thread_id == said["id"]
        await adapter.send(OutboundMessage(message.chat, "On it.", "a-1", reply_to_message_id=said["id"]))
        [sent] = await fake.wait_for_call("create_message")
        assert sent.channel_id == int(said["id"]) and "message_reference" not in sent.body


async def test_a_10000_character_reply_with_a_code_block_arrives_in_chunks_with_fences_intact(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    code = "\n".join(f"    total = total + values[{i}]  # step {i}" for i in range(220))
    reply = "Here is the loop:\n\n```python\n" + code + "\n```\n\n" + "Done. " * 300
    assert len(reply) >= 10_000
    chat = (await _one_dm(fake, sink)).chat
    chunks = adapter.render(reply)
    for index, chunk in enumerate(chunks):
        await adapter.send(OutboundMessage(chat, chunk, f"long-{index}"))
    sent = [call.body["content"] for call in await fake.wait_for_call("create_message", len(chunks))]
    assert len(sent) >= 5 and all(len(text) <= 2000 for text in sent)
    code_chunks = [text for text in sent if "```" in text]
    assert len(code_chunks) >= 4
    for text in code_chunks:
        assert text.count("```") == 2 and "```python\n" in text, "each chunk closes and reopens the fence"
    body = "".join(re.findall(r"```python\n(.*?)\n```", "".join(sent), re.DOTALL))
    assert body.replace("\n", "") == code.replace("\n", "")
    assert "\n".join(re.findall(r"```python\n(.*?)\n```", "\n".join(sent), re.DOTALL)) == code


async def _one_dm(fake: FakeDiscordServer, sink: RecordingSink) -> InboundMessage:
    await fake.dispatch("MESSAGE_CREATE", fake.message(ALICE, "go", channel_id=DM_CHANNEL, guild=False))
    [message] = await sink.wait_for(1)
    return message


async def test_a_short_429_is_waited_out_by_the_library_and_the_message_is_sent_once(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    chat = (await _one_dm(fake, sink)).chat
    fake.rate_limit_next("create_message", retry_after=0.05)
    receipt = await adapter.send(OutboundMessage(chat, "after the wait", "rl-1"))
    calls = fake.calls_to("create_message")
    assert len(calls) == 2 and receipt.platform_message_id  # one 429, then the accepted retry


async def test_a_send_repeated_after_a_crash_shows_once_in_the_chat(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    """A process killed after Discord took a reply but before the outbox recorded it sends that chunk
    again on restart: the chunk's nonce is the same, so Discord returns the message it already made."""
    chat = (await _one_dm(fake, sink)).chat
    first = await adapter.send(OutboundMessage(chat, "your answer", "job-7#0"))
    again = await adapter.send(OutboundMessage(chat, "your answer", "job-7#0"))
    other = await adapter.send(OutboundMessage(chat, "your answer", "job-8#0"))
    assert again.platform_message_id == first.platform_message_id != other.platform_message_id
    assert fake.bot_messages(DM_CHANNEL) == ["your answer", "your answer"]
    assert len({call.body["nonce"] for call in fake.calls_to("create_message")}) == 2


async def test_a_long_429_surfaces_as_a_retryable_send_error_with_retry_after(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    chat = (await _one_dm(fake, sink)).chat
    fake.rate_limit_next("create_message", retry_after=45.0)
    with pytest.raises(SendError) as caught:
        await adapter.send(OutboundMessage(chat, "too fast", "rl-2"))
    assert caught.value.retryable and caught.value.retry_after == 45.0 and caught.value.kind == "rate_limited"
    assert fake.token not in str(caught.value)


async def test_a_duplicate_delivery_carries_the_same_event_id_so_the_ledger_answers_once(
    fake: FakeDiscordServer, adapter: DiscordAdapter, sink: RecordingSink
) -> None:
    said = fake.message(ALICE, "only once please", channel_id=DM_CHANNEL, guild=False)
    await fake.dispatch("MESSAGE_CREATE", said)
    await fake.dispatch("MESSAGE_CREATE", said)  # a gateway replay re-sends the same message
    first, second = await sink.wait_for(2)
    assert first.event_id == second.event_id == said["id"]
    answered: set[str] = set()
    for message in (first, second):  # what the inbound ledger does with them
        if message.event_id not in answered:
            answered.add(message.event_id)
            await adapter.send(OutboundMessage(message.chat, "once", f"dup-{message.event_id}"))
    assert len(await fake.wait_for_call("create_message")) == 1


async def test_edit_replaces_a_sent_message(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    chat = (await _one_dm(fake, sink)).chat
    receipt = await adapter.send(OutboundMessage(chat, "draft", "e-1"))
    await adapter.edit(chat, receipt.platform_message_id, "final")
    [edit] = await fake.wait_for_call("edit_message")
    assert edit.channel_id == DM_CHANNEL and edit.body["content"] == "final"


async def test_the_token_never_appears_in_logs_even_at_debug_level(
    fake: FakeDiscordServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sink = RecordingSink()
    async with create_adapter(adapter_settings(fake)) as adapter:
        await adapter.start(sink)
        chat = (await _one_dm(fake, sink)).chat
        await adapter.send(OutboundMessage(chat, "hi", "log-1"))
    assert caplog.records and fake.token not in caplog.text


async def test_stop_disconnects_and_health_shows_it(fake: FakeDiscordServer) -> None:
    adapter = create_adapter(adapter_settings(fake))
    await adapter.start(RecordingSink())
    assert adapter.health().connected
    await adapter.stop()
    assert not adapter.health().connected
    await wait_until(lambda: not fake._sockets, 5.0, "the gateway connection to close")


async def test_a_rejected_or_missing_token_is_a_clear_config_error(fake: FakeDiscordServer) -> None:
    with pytest.raises(AdapterConfigError, match="DISCORD_BOT_TOKEN"):
        await create_adapter(adapter_settings(fake, token="wrong")).start(RecordingSink())
    with pytest.raises(AdapterConfigError, match="no bot token"):
        create_adapter({"token": " ", "enabled": True})


async def test_a_redelivered_top_level_mention_reuses_the_thread_discord_already_made(
    fake: FakeDiscordServer,
) -> None:
    sink = RecordingSink()
    async with create_adapter(adapter_settings(fake, auto_thread=True)) as adapter:
        await adapter.start(sink)
        refusal = {"message": "A thread has already been created for this message", "code": 160004}
        fake.fail_next["start_thread"] = [(400, refusal, {})]
        said = fake.message(ALICE, "again?", mention_bot=True)
        await fake.dispatch("MESSAGE_CREATE", said)
        [message] = await sink.wait_for(1)
        assert message.chat.kind == ChatKind.THREAD and message.chat.thread_id == said["id"]


async def test_a_dropped_gateway_connection_is_visible_in_health_and_resumes(
    fake: FakeDiscordServer, sink: RecordingSink, adapter: DiscordAdapter
) -> None:
    fake.refuse_connections = True
    await fake.drop_connections()
    await wait_until(lambda: not adapter.health().connected, 5.0, "health to show the outage")
    assert "reconnecting" in adapter.health().detail
    fake.refuse_connections = False
    await wait_until(lambda: adapter.health().connected, 15.0, "the gateway session to resume")
    assert fake.resumed == 1
    await fake.dispatch("MESSAGE_CREATE", fake.message(ALICE, "back?", channel_id=DM_CHANNEL, guild=False))
    [message] = await sink.wait_for(1)
    assert message.text == "back?"
