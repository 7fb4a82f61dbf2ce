"""Streamed replies: one message edited while the turn streams, the final text delivered exactly once."""

from __future__ import annotations

import time
from pathlib import Path

from agent_core.llm.scripted import ScriptStep
from gateway.contracts import ChatRef, OutboundMessage, SendError, SendReceipt

from ..delivery.recording_adapter import dm
from .streaming_harness import EditingAdapter, GatedClient, never_editable, streaming_backbone

REPLY = "Hello there, this is a streamed answer."


async def test_a_streamed_reply_is_one_message_edited_into_the_final_text(home: Path) -> None:
    client = GatedClient([ScriptStep.reply(REPLY, chunks=3)])
    adapter = EditingAdapter()
    async with streaming_backbone(home, client, adapter) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        await b.wait_for(lambda: len(adapter.sent) == 1)
        first = adapter.sent[0].text
        assert REPLY.startswith(first) and first != REPLY  # the user sees the reply growing
        client.release()
        await b.wait_for(lambda: len(adapter.edits) >= 1)
        assert len(adapter.edits[0][1]) > len(first)
        client.release()
        await b.wait_for(lambda: bool(adapter.edits) and adapter.edits[-1][1] == REPLY)
        rows = await b.conversation()
        await b.wait_for(lambda: len(b.streams) == 0)
        assert [m.text for m in adapter.sent] == [first]  # never a second message
        assert {message_id for message_id, _ in adapter.edits} == {"m1"}
        assert [row[1] for row in rows] == [REPLY]


async def test_a_stream_that_shows_the_whole_reply_gets_a_final_edit_only_where_the_platform_marks_it(
    home: Path,
) -> None:
    for marks in (False, True):
        client = GatedClient([ScriptStep.reply(REPLY, chunks=1)])
        adapter = EditingAdapter(marks_final_edit=marks)
        async with streaming_backbone(home / str(marks), client, adapter) as b:
            await b.gateway.pipeline.handle(dm("hi", event="e1"))
            await b.rows_when(lambda rows: rows == [("sent", REPLY)])
            assert [m.text for m in adapter.sent] == [REPLY]  # the stream showed it all at once
            # Telegram and the like skip an edit that changes nothing; the web chat's final edit is what
            # turns its streamed item into the delivered reply.
            assert adapter.edits == ([("m1", REPLY)] if marks else [])


async def test_without_streaming_the_reply_is_sent_once_and_never_edited(home: Path) -> None:
    client = GatedClient([ScriptStep.reply(REPLY, chunks=2)])
    adapter = EditingAdapter()
    async with streaming_backbone(home, client, adapter, streaming=False) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        client.release()
        await b.wait_for(lambda: len(adapter.sent) == 1)
        assert adapter.texts() == [REPLY]
        assert adapter.edits == []


async def test_a_platform_that_cannot_edit_is_never_streamed(home: Path) -> None:
    client = GatedClient([ScriptStep.reply(REPLY, chunks=2)])
    adapter = EditingAdapter(can_edit=False)
    async with streaming_backbone(home, client, adapter) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        client.release()
        await b.wait_for(lambda: len(adapter.sent) == 1)
        assert adapter.texts() == [REPLY]


async def test_overflow_beyond_one_message_continues_in_a_new_message(home: Path) -> None:
    client = GatedClient([ScriptStep.reply("part one§part two", chunks=2)])
    adapter = EditingAdapter(split="§")
    async with streaming_backbone(home, client, adapter) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        await b.wait_for(lambda: len(adapter.sent) == 1)
        client.release()
        await b.wait_for(lambda: len(adapter.sent) == 2)
        assert adapter.texts() == ["part one", "part two"]
        assert all(text == "part one" for _, text in adapter.edits)


async def test_when_the_stream_cannot_be_edited_the_final_reply_is_sent_normally(home: Path) -> None:
    client = GatedClient([ScriptStep.reply(REPLY, chunks=2)])
    adapter = EditingAdapter()
    adapter.edit_failures.extend(never_editable() for _ in range(3))
    async with streaming_backbone(home, client, adapter) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        await b.wait_for(lambda: len(adapter.sent) == 1)
        partial = adapter.sent[0].text
        client.release()
        await b.wait_for(lambda: len(adapter.sent) == 2)
        assert adapter.texts() == [partial, REPLY]
        rows = await b.rows_when(lambda rows: rows[0][0] in ("sent", "failed"))
        assert [row[0] for row in rows] == ["sent"]


async def test_stream_edits_never_make_the_final_reply_wait_for_the_chat_budget(home: Path) -> None:
    # Two tokens, refilled once a minute: the stream may take one, the final delivery keeps the other.
    client = GatedClient([ScriptStep.reply(REPLY, chunks=4)])
    adapter = EditingAdapter()
    async with streaming_backbone(home, client, adapter, rate={"per_s": 1 / 60, "burst": 2}) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        await b.wait_for(lambda: len(adapter.sent) == 1)
        client.release(3)
        started = time.monotonic()
        await b.wait_for(lambda: bool(adapter.edits) and adapter.edits[-1][1] == REPLY)
        assert time.monotonic() - started < 5  # not the 60 s a borrowed token would cost
        assert len(adapter.sent) == 1 and len(adapter.edits) == 1  # the stream got no spare token


class FloodLimitedPlatform(EditingAdapter):
    """A platform that answers one chosen call with 429 and ``retry_after`` and then, like Telegram, refuses
    every call to the chat until that wait is over, recording each one that came too early."""

    def __init__(self, retry_after: float) -> None:
        super().__init__()
        self.retry_after = retry_after
        self.limit_next: str | None = None  # "send" or "edit": the next such call gets the 429
        self.limited_until: float | None = None
        self.too_early: list[str] = []

    def _admit(self, call: str) -> None:
        now = time.monotonic()
        if self.limited_until is not None and now < self.limited_until - 0.001:
            self.too_early.append(call)
            raise SendError("429", retryable=True, retry_after=self.limited_until - now, kind="rate_limited")
        if self.limit_next == call:
            self.limit_next = None
            self.limited_until = now + self.retry_after
            raise SendError("429", retryable=True, retry_after=self.retry_after, kind="rate_limited")

    async def send(self, message: OutboundMessage) -> SendReceipt:
        self._admit("send")
        return await super().send(message)

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        self._admit("edit")
        await super().edit(chat, platform_message_id, text)


async def test_after_a_rate_limited_stream_edit_the_final_reply_waits_out_retry_after(home: Path) -> None:
    client = GatedClient([ScriptStep.reply(REPLY, chunks=3)])
    platform = FloodLimitedPlatform(retry_after=1.0)
    async with streaming_backbone(home, client, platform) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        await b.wait_for(lambda: len(platform.sent) == 1)
        platform.limit_next = "edit"
        client.release()
        await b.wait_for(lambda: platform.limited_until is not None)
        client.release()  # the turn ends at once; its delivery edits the streamed message
        await b.wait_for(lambda: bool(platform.edits) and platform.edits[-1][1] == REPLY)
    assert platform.too_early == []
    assert len(platform.sent) == 1  # still one message, edited into the reply


async def test_while_a_notice_waits_out_retry_after_the_stream_to_that_chat_makes_no_edit(home: Path) -> None:
    client = GatedClient([ScriptStep.reply(REPLY, chunks=3)])
    platform = FloodLimitedPlatform(retry_after=1.0)
    async with streaming_backbone(home, client, platform) as b:
        await b.gateway.pipeline.handle(dm("hi", event="e1"))
        await b.wait_for(lambda: len(platform.sent) == 1)
        platform.limit_next = "send"
        await b.gateway.pipeline.handle(dm("/help", event="e2"))  # a command reply to the same chat
        await b.wait_for(lambda: platform.limited_until is not None)
        client.release(2)  # the stream has new text to show, and the turn then ends
        await b.wait_for(lambda: bool(platform.edits) and platform.edits[-1][1] == REPLY)
        await b.wait_for(lambda: len(platform.sent) == 2)  # the /help reply, once the wait was over
    assert platform.too_early == []
