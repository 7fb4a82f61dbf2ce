"""The browser web chat's channel: replies rendered to sanitised HTML, streamed replies edited in place, and
the chat's current activity ("thinking…", the tool in use) published to its feed.

Invariants: everything this channel publishes is HTML from ``render_html`` (a reply, a notice, each
streamed snapshot), passed through the sanitiser once more on the way out, so the page never renders
Markdown or sanitises anything itself; a streamed reply is
one feed item (its key, kind "stream") replaced as it grows; when the turn is ``done`` it shows the
rendering of the reply exactly as stored, still as a "stream" item, and the delivery loop's final edit
(after the job finished) makes it a "reply" (an edit after ``done`` is a reply), so what stays on screen is
what state.db holds, and a reader that wants whole replies only (the long poll) can skip "stream" items
and never sees an answer before its conversation is free for the next message; a chat has at most one activity
item, replaced on every change, and ``done`` ends it.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Sequence

from gateway.contracts import Capabilities, ChatRef, OutboundMessage, SendReceipt
from gateway.webchat.adapter import WebChatAdapter
from gateway.webchat.feed import ChatFeed
from gateway.webchat.hand_off import AWAITED_MAX
from gateway.webchat.rendering import render_html, sanitise_html

BROWSER_CAPABILITIES = Capabilities(max_text_length=400_000, can_edit=True, marks_final_edit=True)
"""Room for a long reply's HTML in one message, and edits: the stream and its final edit (always made: it
turns the streamed item into the reply)."""
STREAM_INTERVAL_S = 0.1
"""Least time between two snapshots of a streamed reply (a browser renders them cheaply)."""
ACTIVITY_KEY = "~activity"
"""The feed key of a chat's current activity (one item per chat, replaced)."""
_TOOL_LABELS = {
    "session_search": "searching your past conversations…",
    "memory": "saving to memory…",
    "skills_list": "looking through skills…",
    "skill_view": "reading a skill…",
    "skill_manage": "updating a skill…",
}


def activity_label(state: str, tool: str | None) -> str:
    """What the page shows for an activity: "thinking…", "writing…" or the tool in use."""
    if state == "tool" and tool:
        return _TOOL_LABELS.get(tool, f"using {tool}…")
    return {"thinking": "thinking…", "writing": "writing…"}.get(state, "")


class BrowserChat(WebChatAdapter):
    """The web chat ("web"): a ``WebChatAdapter`` whose platform dialect is sanitised HTML."""

    capabilities = BROWSER_CAPABILITIES

    def __init__(self, feed: ChatFeed | None = None) -> None:
        super().__init__("web", feed)
        self._streaming: dict[str, tuple[str, str]] = {}
        """Per chat, the reply being streamed now: its message id and the HTML shown."""
        self._answering: OrderedDict[str, str] = OrderedDict()
        """Per streamed message id, the message it answers (settled by the delivery's final edit)."""

    def render(self, markdown: str) -> Sequence[str]:
        return [render_html(markdown)]

    async def send(self, message: OutboundMessage) -> SendReceipt:
        # Rendered by ``render`` already; sanitised again so no path can put unchecked HTML on the page.
        html = sanitise_html(message.text)
        self._awaited.delivered(message)
        if message.kind == "stream":
            self._streaming[message.chat.chat_id] = (message.idempotency_key, html)
            if message.reply_to_message_id is not None:
                self._answering[message.idempotency_key] = message.reply_to_message_id
                while len(self._answering) > AWAITED_MAX:  # streams stopped before any final edit
                    self._answering.popitem(last=False)
        await self.feed.publish(message.chat.chat_id, message.idempotency_key, html, kind=message.kind)
        self._last_send_at = time.time()
        return SendReceipt(platform_message_id=message.idempotency_key)

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        """A streamed reply grew, or became the final reply: the page replaces it in place."""
        html = sanitise_html(text)
        current = self._streaming.get(chat.chat_id)
        kind = "stream" if current is not None and current[0] == platform_message_id else "reply"
        if kind == "stream":
            self._streaming[chat.chat_id] = (platform_message_id, html)
        else:
            answered = self._answering.pop(platform_message_id, None)
            if answered is not None:
                self._awaited.answered(answered)
        await self.feed.publish(chat.chat_id, platform_message_id, html, kind=kind, replace=True)
        self._last_send_at = time.time()

    async def activity(
        self, chat: ChatRef, state: str, tool: str | None = None, reply: str | None = None
    ) -> None:
        """The chat's turn is ``thinking``, ``writing``, using ``tool`` (state ``tool``), or ``done`` (with
        its final ``reply`` as stored, when it has one)."""
        body = json.dumps({"state": state, "tool": tool, "label": activity_label(state, tool)})
        await self.feed.publish(chat.chat_id, ACTIVITY_KEY, body, kind="activity", replace=True)
        streamed = self._streaming.pop(chat.chat_id, None) if state == "done" else None
        if streamed is not None:
            # Still a "stream" item: the turn's job is not finished yet (the lane closes the turn before it
            # records the finish), so a reader waiting for the answer must not take it and send its next
            # message into a conversation that is still busy. The delivery's final edit, which this
            # platform always gets (``marks_final_edit``), makes it the reply.
            message_id, shown = streamed
            html = sanitise_html(render_html(reply)) if reply is not None else shown
            await self.feed.publish(chat.chat_id, message_id, html, kind="stream", replace=True)
