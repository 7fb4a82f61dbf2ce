"""A platform adapter for tests: records every send and fails the sends it is told to fail."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Sequence

from gateway.contracts import (
    Adapter,
    Capabilities,
    ChatKind,
    ChatRef,
    InboundMessage,
    InboundSink,
    OutboundMessage,
    SendReceipt,
    UserRef,
)


class RecordingAdapter(Adapter):
    """``failures``: exceptions raised by the next sends, in order (then sends succeed)."""

    def __init__(self, name: str = "test", *, max_len: int = 4096, split: str | None = None) -> None:
        self.name = name
        self.capabilities = Capabilities(max_text_length=max_len)
        self.sent: list[OutboundMessage] = []
        self.failures: deque[Exception] = deque()
        self.sink: InboundSink | None = None
        self._split = split
        self._ids = itertools.count(1)

    async def start(self, sink: InboundSink) -> None:
        self.sink = sink

    async def stop(self) -> None:
        self.sink = None

    def render(self, markdown: str) -> Sequence[str]:
        if self._split is None:
            return [markdown]
        return [part for part in markdown.split(self._split) if part]

    async def send(self, message: OutboundMessage) -> SendReceipt:
        if self.failures:
            raise self.failures.popleft()
        self.sent.append(message)
        return SendReceipt(platform_message_id=f"m{next(self._ids)}")

    def texts(self, chat_id: str | None = None) -> list[str]:
        return [m.text for m in self.sent if chat_id is None or m.chat.chat_id == chat_id]


def dm(
    text: str,
    *,
    user: str = "ada",
    event: str,
    platform: str = "test",
    is_bot: bool = False,
    chat_id: str | None = None,
    kind: ChatKind = ChatKind.DM,
    thread_id: str | None = None,
    mentions_bot: bool = True,
) -> InboundMessage:
    """A message from ``user`` (in their DM unless ``chat_id``/``kind`` say otherwise), addressed to the bot
    unless ``mentions_bot`` is False."""
    chat = ChatRef(platform=platform, chat_id=chat_id or f"dm-{user}", kind=kind, thread_id=thread_id)
    return InboundMessage(
        event_id=event,
        chat=chat,
        sender=UserRef(platform=platform, user_id=user, display_name=user.title(), is_bot=is_bot),
        text=text,
        message_id=event,
        mentions_bot=mentions_bot,
    )
