"""A web chat channel names the messages whose answers its callers wait for in this process, so the delivery
loop here claims those replies at once (and other processes leave them alone for a grace period)."""

from __future__ import annotations

import pytest

from gateway.api import ApiChannel
from gateway.contracts import InboundMessage, InboundOutcome, OutboundMessage
from gateway.webchat import BrowserChat, MessageRefusedError, WebChatAdapter


async def accept(message: InboundMessage) -> InboundOutcome:
    return InboundOutcome(accepted=True)


async def refuse(message: InboundMessage) -> InboundOutcome:
    return InboundOutcome(accepted=False, reason="rate_limited", retry_after_s=5)


async def test_an_accepted_message_is_awaited_until_its_answer_is_delivered_here() -> None:
    web = WebChatAdapter("web")
    await web.start(accept)
    first = await web.submit("chat-1", "hello", "m1")
    second = await web.submit("chat-2", "hi", "m1")
    assert web.awaited_replies() == {first, second}

    chat = web.chat_ref("chat-1")
    await web.send(
        OutboundMessage(chat, "one moment", idempotency_key="ack:1", kind="ack", reply_to_message_id=first)
    )
    assert web.awaited_replies() == {first, second}  # a notice is not the answer
    await web.send(OutboundMessage(chat, "hello to you", idempotency_key="turn:1", reply_to_message_id=first))
    assert web.awaited_replies() == {second}
    await web.stop()


async def test_a_refused_message_is_not_awaited() -> None:
    web = WebChatAdapter("web")
    await web.start(refuse)
    with pytest.raises(MessageRefusedError):
        await web.submit("chat-1", "hello", "m1")
    assert web.awaited_replies() == frozenset()


async def test_a_streamed_browser_reply_answers_its_message_with_the_deliverys_final_edit() -> None:
    web = BrowserChat()
    await web.start(accept)
    asked = await web.submit("chat-1", "hello", "m1")
    chat = web.chat_ref("chat-1")
    await web.send(
        OutboundMessage(
            chat, "<p>hel</p>", idempotency_key="stream-1", kind="stream", reply_to_message_id=asked
        )
    )
    await web.edit(chat, "stream-1", "<p>hello</p>")  # the stream grows: not the answer yet
    await web.activity(chat, "done", reply="hello")
    assert web.awaited_replies() == {asked}
    await web.edit(chat, "stream-1", "<p>hello</p>")  # the delivery loop's final edit
    assert web.awaited_replies() == frozenset()
    await web.stop()


async def test_an_api_request_is_awaited_until_its_answer_is_delivered_here() -> None:
    api = ApiChannel()
    await api.start(accept)
    asked = await api.submit("client.alice", "hello", "r1")
    assert api.awaited_replies() == {asked}
    chat = api.chat_ref("client.alice")
    await api.send(OutboundMessage(chat, "hi", idempotency_key="turn:1", reply_to_message_id=asked))
    assert api.awaited_replies() == frozenset()
    await api.stop()
