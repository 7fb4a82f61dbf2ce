"""The browser channel: replies as sanitised HTML, streamed replies replaced in place, the turn's activity."""

from __future__ import annotations

import json

from gateway.contracts import OutboundMessage
from gateway.webchat import ACTIVITY_KEY, BrowserChat


async def test_a_streamed_reply_is_one_item_that_grows_and_becomes_the_stored_reply_when_delivered() -> None:
    chat = BrowserChat()
    ref = chat.chat_ref("web:h.1")
    (first,) = chat.render("**Hel")
    receipt = await chat.send(OutboundMessage(ref, first, idempotency_key="stream-1", kind="stream"))
    (grown,) = chat.render("**Hello** <img src=x onerror=alert(1)>")
    await chat.edit(ref, receipt.platform_message_id, grown)
    items = chat.feed.since("web:h.1", None)
    assert [(i.receipt_id, i.kind) for i in items] == [("stream-1", "stream")]
    assert items[0].text == "<p><strong>Hello</strong> &lt;img src=x onerror=alert(1)&gt;</p>"

    stored = "**Hello** <img src=x onerror=alert(1)> and the rest."
    (final,) = chat.render(stored)
    await chat.activity(ref, "done", reply=stored)
    # The turn ended but its job is not finished yet: the page shows the stored rendering, still as a stream,
    # so a reader waiting for whole replies does not send its next message into a busy conversation.
    shown = [i for i in chat.feed.since("web:h.1", None) if i.receipt_id == "stream-1"]
    assert [(i.kind, i.text) for i in shown] == [("stream", final)]
    done = chat.feed.position()
    await chat.edit(ref, "stream-1", final)  # the delivery loop's final edit (made even with the same HTML)
    delivered = chat.feed.since("web:h.1", done)
    assert [(i.receipt_id, i.kind, i.text) for i in delivered] == [("stream-1", "reply", final)]
    assert [i.receipt_id for i in chat.feed.since("web:h.1", None)].count("stream-1") == 1


async def test_unrendered_text_handed_to_the_channel_is_still_sanitised() -> None:
    chat = BrowserChat()
    ref = chat.chat_ref("web:h.1")
    await chat.send(OutboundMessage(ref, '<b onclick="x()">hi</b><script>x()</script>', idempotency_key="k"))
    assert [i.text for i in chat.feed.since("web:h.1", None)] == ["hi"]


async def test_the_chats_activity_is_one_item_saying_what_the_turn_does() -> None:
    chat = BrowserChat()
    ref = chat.chat_ref("web:h.1")
    await chat.activity(ref, "thinking")
    await chat.activity(ref, "tool", "session_search")
    items = chat.feed.since("web:h.1", None)
    assert [i.receipt_id for i in items] == [ACTIVITY_KEY]
    assert json.loads(items[0].text) == {
        "state": "tool",
        "tool": "session_search",
        "label": "searching your past conversations…",
    }
    await chat.activity(ref, "tool", "memory")
    assert json.loads(chat.feed.since("web:h.1", None)[0].text)["label"] == "saving to memory…"
