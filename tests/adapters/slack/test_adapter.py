"""The Slack adapter end to end: real slack-bolt/slack_sdk against the fake Slack on 127.0.0.1, with signed
Events API requests delivered to our own FastAPI route under uvicorn."""

from __future__ import annotations

import asyncio
import time

import pytest

from adapters.slack import SlackAdapter, create_adapter
from gateway.contracts import AdapterConfigError, ChatKind, ChatRef, OutboundMessage, SendError
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until
from tests.adapters.fakes.slack_server import FakeSlackServer, sign, slack_mrkdwn_text
from tests.adapters.slack.conftest import SlackEvents, adapter_settings

ALICE, BOB = "UALICE", "UBOB"
DM, GENERAL, PRIVATE = "D0ALICE", "C0GENERAL", "G0PRIVATE"


async def reply(
    adapter: SlackAdapter, chat: ChatRef, markdown: str, reply_to: str | None = None
) -> list[str]:
    ids = []
    for index, chunk in enumerate(adapter.render(markdown)):
        sent = await adapter.send(
            OutboundMessage(chat, chunk, f"k#{index}", reply_to if index == 0 else None)
        )
        ids.append(sent.platform_message_id)
    return ids


async def test_a_dm_reaches_the_gateway_and_the_reply_lands_in_the_dm(
    fake: FakeSlackServer, sink: RecordingSink, adapter: SlackAdapter, slack: SlackEvents
) -> None:
    body = fake.event_body(fake.message(DM, ALICE, "hello &lt;there&gt;"))
    answer = await slack.post(body)
    assert answer.status_code == 200
    [message] = await sink.wait_for(1)
    assert (message.event_id, message.text) == (body["event_id"], "hello <there>")
    assert (message.chat.kind, message.chat.chat_id, message.chat.workspace) == (ChatKind.DM, DM, "T0001")
    assert message.mentions_bot and message.sender.user_id == ALICE and not message.sender.is_bot

    await reply(adapter, message.chat, "Hi **Alice** & <co>", reply_to=message.message_id)
    [call] = await fake.wait_for_call("chat.postMessage")
    assert call.params["channel"] == DM and "thread_ts" not in call.params  # a DM is answered in the DM
    assert call.params["text"] == "Hi *Alice* &amp; &lt;co&gt;"
    assert slack_mrkdwn_text(call.params["text"]) == "Hi *Alice* & <co>"
    health = adapter.health()
    assert health.connected and health.last_inbound_at is not None and health.last_send_at is not None


async def test_a_channel_message_without_a_mention_is_not_addressed_to_the_bot(
    fake: FakeSlackServer, sink: RecordingSink, slack: SlackEvents
) -> None:
    await slack.post(fake.event_body(fake.message(GENERAL, BOB, "lunch anyone?")))
    await slack.post(fake.event_body(fake.message(PRIVATE, BOB, "secret lunch?")))
    public, private = await sink.wait_for(2)
    assert (public.chat.kind, public.mentions_bot, public.replies_to_bot) == (ChatKind.CHANNEL, False, False)
    assert (private.chat.kind, private.mentions_bot) == (ChatKind.GROUP, False)


async def test_a_top_level_mention_is_one_message_answered_in_a_new_thread_under_it(
    fake: FakeSlackServer, sink: RecordingSink, adapter: SlackAdapter, slack: SlackEvents
) -> None:
    mention = fake.mention(GENERAL, BOB, "what did we read?")
    # Slack sends the same words twice: as app_mention and as the channel's message event.
    twin = {**mention, "type": "message", "channel_type": "channel"}
    await slack.post(fake.event_body(mention))
    await slack.post(fake.event_body(twin))
    [message] = await sink.wait_for(1)
    assert message.text == "what did we read?" and message.mentions_bot
    assert (message.chat.kind, message.chat.thread_id) == (ChatKind.THREAD, mention["ts"])

    await reply(adapter, message.chat, "You read *Dune*.")
    [call] = await fake.wait_for_call("chat.postMessage")
    assert (call.params["channel"], call.params["thread_ts"]) == (GENERAL, mention["ts"])
    assert len(sink.offered) == 1  # the twin never reached the gateway

    # A follow-up in that thread without a mention still reaches the bot's conversation.
    await slack.post(fake.event_body(fake.message(GENERAL, BOB, "and before?", thread_ts=mention["ts"])))
    _, follow_up = await sink.wait_for(2)
    assert follow_up.chat == message.chat and follow_up.replies_to_bot and not follow_up.mentions_bot


async def test_a_thread_message_is_answered_in_the_same_thread(
    fake: FakeSlackServer, sink: RecordingSink, adapter: SlackAdapter, slack: SlackEvents
) -> None:
    root = fake.next_ts()
    await slack.post(fake.event_body(fake.message(GENERAL, BOB, "chatter", thread_ts=root)))
    await slack.post(fake.event_body(fake.mention(GENERAL, ALICE, "summarise this", thread_ts=root)))
    chatter, asked = await sink.wait_for(2)
    assert (chatter.chat.kind, chatter.chat.thread_id, chatter.replies_to_bot) == (
        ChatKind.THREAD,
        root,
        False,
    )
    assert asked.chat == chatter.chat and asked.mentions_bot and asked.reply_to_message_id == root

    await reply(adapter, asked.chat, "Summary: nothing yet.")
    [call] = await fake.wait_for_call("chat.postMessage")
    assert (call.params["channel"], call.params["thread_ts"]) == (GENERAL, root)


async def test_a_10000_character_reply_with_a_code_block_arrives_in_valid_chunks(
    fake: FakeSlackServer, adapter: SlackAdapter
) -> None:
    code = "\n".join(f"    total += values[{i}]  # <{i}> & more" for i in range(160))
    markdown = "Intro **text**.\n\n" + ("word " * 730) + f"\n\n```python\n{code}\n```\n\nDone."
    assert len(markdown) >= 10_000
    chat = ChatRef("slack", GENERAL, ChatKind.THREAD, workspace="T0001", thread_id="1.000001")
    ids = await reply(adapter, chat, markdown)
    calls = await fake.wait_for_call("chat.postMessage", len(ids))
    assert len(ids) >= 3 and len(set(ids)) == len(ids)
    texts = [str(call.params["text"]) for call in calls]
    assert all(len(text) <= 4000 for text in texts)
    assert all(text.count("```") % 2 == 0 for text in texts)  # every chunk closes the fences it opens
    assert all(call.params["thread_ts"] == "1.000001" for call in calls)
    visible = "".join(slack_mrkdwn_text(text) for text in texts)
    for i in range(160):  # no code line lost or mangled across the split
        assert f"total += values[{i}]  # <{i}> & more" in visible


async def test_a_429_is_a_retryable_send_error_with_slacks_retry_after(
    fake: FakeSlackServer, adapter: SlackAdapter
) -> None:
    fake.fail_next("chat.postMessage", "ratelimited", status=429, retry_after=7)
    chat = ChatRef("slack", DM, ChatKind.DM, workspace="T0001")
    with pytest.raises(SendError) as caught:
        await adapter.send(OutboundMessage(chat, "hello", "k1"))
    assert (caught.value.retryable, caught.value.retry_after, caught.value.kind) == (
        True,
        7.0,
        "rate_limited",
    )
    receipt = await adapter.send(OutboundMessage(chat, "hello", "k1"))  # the retry the gateway makes
    assert receipt.platform_message_id


async def test_a_retried_delivery_of_the_same_event_reaches_the_gateway_once(
    fake: FakeSlackServer, sink: RecordingSink, slack: SlackEvents
) -> None:
    body = fake.event_body(fake.message(DM, ALICE, "only once"))
    assert (await slack.post(body)).status_code == 200
    await sink.wait_for(1)
    assert (await slack.post(body, retry_num=1)).status_code == 200
    assert (await slack.post(body, retry_num=2)).status_code == 200
    await slack.post(fake.event_body(fake.message(DM, ALICE, "next")))
    await sink.wait_for(2)
    assert [m.text for m in sink.offered] == ["only once", "next"]


async def test_a_badly_signed_or_stale_request_is_refused(
    fake: FakeSlackServer, sink: RecordingSink, slack: SlackEvents
) -> None:
    body = fake.event_body(fake.message(DM, ALICE, "forged"))
    assert (await slack.post(body, secret="not-the-secret")).status_code == 401
    raw = b'{"type": "event_callback"}'
    stale = sign(slack.secret, raw, int(time.time()) - 600)
    assert (await slack.client.post("/webhooks/slack/events", content=raw, headers=stale)).status_code == 401
    await slack.post(fake.event_body(fake.message(DM, ALICE, "genuine")))
    [message] = await sink.wait_for(1)
    assert message.text == "genuine" and len(sink.offered) == 1


async def test_slack_is_acked_only_after_the_gateway_has_stored_the_message(
    fake: FakeSlackServer, sink: RecordingSink, slack: SlackEvents
) -> None:
    sink.hold = asyncio.Event()  # the gateway's durable write is in progress
    answer = asyncio.create_task(slack.post(fake.event_body(fake.message(DM, ALICE, "stored first"))))
    await wait_until(lambda: len(sink.offered) == 1, 5, "the hand-off")
    assert not answer.done(), "Slack must not be acked before the message is stored"
    sink.hold.set()
    assert (await answer).status_code == 200
    assert [m.text for m in sink.received] == ["stored first"]


async def test_a_delivery_the_gateway_could_not_store_gets_an_error_so_slack_redelivers(
    fake: FakeSlackServer, sink: RecordingSink, slack: SlackEvents
) -> None:
    sink.refuse = 1
    body = fake.event_body(fake.message(DM, ALICE, "try again"))
    refused = await slack.post(body)
    assert refused.status_code >= 500
    assert sink.received == []
    redelivered = await slack.post(body, retry_num=1)
    assert redelivered.status_code == 200
    assert [m.text for m in sink.received] == ["try again"]


async def test_the_url_verification_challenge_is_answered(slack: SlackEvents) -> None:
    answer = await slack.post({"type": "url_verification", "token": "t", "challenge": "abc123"})
    assert answer.status_code == 200 and answer.json() == {"challenge": "abc123"}


async def test_own_messages_are_ignored_and_other_bots_are_marked(
    fake: FakeSlackServer, sink: RecordingSink, slack: SlackEvents
) -> None:
    await slack.post(fake.event_body(fake.message(GENERAL, fake.bot_user_id, "my own words")))
    own_via_bot_id = fake.message(GENERAL, "UOTHER", "also mine", bot_id=fake.bot_id)
    await slack.post(fake.event_body(own_via_bot_id))
    other = fake.message(GENERAL, "UHELPER", "beep", bot_id="BHELPER", subtype="bot_message")
    await slack.post(fake.event_body(other))
    edited = fake.message(GENERAL, BOB, "", subtype="message_changed")
    await slack.post(fake.event_body(edited))
    await slack.post(fake.event_body(fake.message(GENERAL, BOB, "human")))
    bot, human = await sink.wait_for(2)
    assert (bot.text, bot.sender.is_bot) == ("beep", True)
    assert (human.text, human.sender.is_bot) == ("human", False)
    assert len(sink.offered) == 2


async def test_each_workspace_is_its_own_chat_and_is_answered_with_its_own_token(
    fake: FakeSlackServer, sink: RecordingSink, adapter: SlackAdapter, slack: SlackEvents
) -> None:
    await slack.post(fake.event_body(fake.message(DM, ALICE, "from one")))
    await slack.post(fake.event_body(fake.message(DM, ALICE, "from two"), team_id="T0002"))
    one, two = await sink.wait_for(2)
    assert (one.chat.workspace, two.chat.workspace) == ("T0001", "T0002")
    assert one.chat != two.chat  # same channel and user ids, different workspaces: different keys
    await adapter.send(OutboundMessage(two.chat, "hi two", "k2"))
    await adapter.send(OutboundMessage(one.chat, "hi one", "k1"))
    second, first = await fake.wait_for_call("chat.postMessage", 2)
    assert (second.token, first.token) == ("xoxb-second-workspace", fake.bot_token)


async def test_edits_use_chat_update_and_refuse_more_than_4000_characters(
    fake: FakeSlackServer, adapter: SlackAdapter
) -> None:
    chat = ChatRef("slack", DM, ChatKind.DM, workspace="T0001")
    receipt = await adapter.send(OutboundMessage(chat, "draft", "k1"))
    await adapter.edit(chat, receipt.platform_message_id, "final *answer*")
    [call] = await fake.wait_for_call("chat.update")
    assert (call.params["ts"], call.params["text"]) == (receipt.platform_message_id, "final *answer*")
    with pytest.raises(SendError) as caught:
        await adapter.edit(chat, receipt.platform_message_id, "x" * 4001)
    assert caught.value.kind == "too_long" and not caught.value.retryable


async def test_socket_mode_delivers_events_and_acks_each_envelope(
    fake: FakeSlackServer, sink: RecordingSink
) -> None:
    settings = adapter_settings(fake, mode="socket", app_token=fake.app_token, signing_secret=None)
    async with create_adapter(settings) as adapter:
        await adapter.start(sink)
        assert adapter.http_routes() == ()
        body = fake.event_body(fake.message(DM, ALICE, "over the socket"))
        await fake.push_socket_event(body)
        [message] = await sink.wait_for(1)
        assert (message.event_id, message.text, message.chat.kind) == (
            body["event_id"],
            "over the socket",
            "dm",
        )
        await wait_until(lambda: adapter.health().connected, 5, "socket health")
        await adapter.send(OutboundMessage(message.chat, "socket reply", "k1"))
        [call] = await fake.wait_for_call("chat.postMessage")
        assert call.params["text"] == "socket reply"
    assert not adapter.health().connected


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"signing_secret": None}, "SLACK_SIGNING_SECRET"),
        ({"mode": "socket", "app_token": None}, "SLACK_APP_TOKEN"),
        ({"bot_token": " "}, "SLACK_BOT_TOKEN"),
    ],
)
async def test_missing_credentials_stop_start_up_with_one_clear_message(
    fake: FakeSlackServer, overrides: dict[str, object], needle: str
) -> None:
    with pytest.raises(AdapterConfigError, match=needle):
        create_adapter(adapter_settings(fake, **overrides))


async def test_a_rejected_bot_token_is_a_config_error_that_does_not_show_the_token(
    fake: FakeSlackServer, sink: RecordingSink
) -> None:
    adapter = create_adapter(adapter_settings(fake, bot_token="xoxb-revoked-secret"))
    with pytest.raises(AdapterConfigError, match="SLACK_BOT_TOKEN") as caught:
        await adapter.start(sink)
    assert "xoxb-revoked-secret" not in str(caught.value)
