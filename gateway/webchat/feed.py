"""The in-memory feed of delivered replies per chat, which browsers and API callers wait on.

Invariants: every delivery gets a sequence number that only grows within one feed; a delivery whose
idempotency key was already published to that chat is not published again (a delivery retry never shows a
reply twice) unless it is published as a replacement (a streamed reply growing, the chat's current activity)
that changes it: then the old item goes and the new one takes the next sequence number, so a chat keeps one
item per key and a reader past the old one sees the new one once; memory is bounded — ``per_chat`` items per
chat, ``max_chats`` chats and ``max_bytes`` of reply text in all (least recently used chats dropped first,
then a chat's oldest items; the newest delivery always stays). The feed is not durable: after a restart (or
an eviction) a browser reloads its history from state.db, which is why cursors carry the feed's random
epoch.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
_ITEM_OVERHEAD = 160  # bytes a Delivery and its deque slot cost beyond the text, roughly


@dataclass(frozen=True)
class Delivery:
    """One reply chunk as delivered to a chat; ``kind`` is the outbound kind ("reply", "command", "stream",
    "activity", ...)."""

    seq: int
    receipt_id: str
    text: str
    at: float
    kind: str = "reply"


@dataclass(frozen=True)
class Cursor:
    """A position in one feed; a cursor from another epoch (a restarted process) means "from the start"."""

    epoch: str
    seq: int

    def to_string(self) -> str:
        return f"{self.epoch}.{self.seq}"

    @classmethod
    def parse(cls, text: str | None) -> Cursor | None:
        if not text:
            return None
        epoch, _, seq = text.partition(".")
        if not seq.isdigit() or len(seq) > 18:
            return None
        return cls(epoch, int(seq))


class ChatFeed:
    """Delivered replies per chat id, with waiters woken on every publish."""

    def __init__(
        self, *, per_chat: int = 200, max_chats: int = 10_000, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.epoch = secrets.token_hex(4)
        self._per_chat = per_chat
        self._max_chats = max_chats
        self._max_bytes = max_bytes
        self._chats: OrderedDict[str, deque[Delivery]] = OrderedDict()
        self._chat_bytes: dict[str, int] = {}
        self._bytes = 0
        self._seq = 0
        self._changed = asyncio.Condition()
        self._closed = False

    def position(self) -> Cursor:
        """The cursor just after everything published so far."""
        return Cursor(self.epoch, self._seq)

    async def publish(
        self, chat_id: str, receipt_id: str, text: str, *, kind: str = "reply", replace: bool = False
    ) -> Delivery:
        """Record one delivery for ``chat_id`` (once per receipt id, unless ``replace``); wake its waiters."""
        items = self._chats.get(chat_id)
        if items is None:
            items = self._chats[chat_id] = deque()
        else:
            self._chats.move_to_end(chat_id)
            for existing in items:
                if existing.receipt_id == receipt_id:
                    if not replace or (existing.text, existing.kind) == (text, kind):
                        return existing
                    items.remove(existing)
                    self._account(chat_id, -_size(existing))
                    break
        self._seq += 1
        delivery = Delivery(self._seq, receipt_id, text, time.time(), kind)
        items.append(delivery)
        self._account(chat_id, _size(delivery))
        self._evict(chat_id, items)
        async with self._changed:
            self._changed.notify_all()
        return delivery

    @property
    def held_bytes(self) -> int:
        """The (approximate) memory the kept deliveries take, as counted against ``max_bytes``."""
        return self._bytes

    def _account(self, chat_id: str, size: int) -> None:
        self._chat_bytes[chat_id] = self._chat_bytes.get(chat_id, 0) + size
        self._bytes += size

    def _evict(self, chat_id: str, newest: deque[Delivery]) -> None:
        """Apply the bounds after a publish to ``chat_id`` (so the most recently used chat)."""
        while len(newest) > self._per_chat:
            self._account(chat_id, -_size(newest.popleft()))
        while len(self._chats) > self._max_chats or (self._bytes > self._max_bytes and len(self._chats) > 1):
            dropped, _ = self._chats.popitem(last=False)
            self._bytes -= self._chat_bytes.pop(dropped, 0)
        while self._bytes > self._max_bytes and len(newest) > 1:
            self._account(chat_id, -_size(newest.popleft()))

    def since(self, chat_id: str, cursor: Cursor | None) -> list[Delivery]:
        """Deliveries to ``chat_id`` after ``cursor`` (all kept ones for a missing or foreign cursor)."""
        after = cursor.seq if cursor is not None and cursor.epoch == self.epoch else 0
        return [item for item in self._chats.get(chat_id, ()) if item.seq > after]

    async def wait(self, chat_id: str, cursor: Cursor | None, timeout: float) -> list[Delivery]:  # noqa: ASYNC109
        """Deliveries after ``cursor``, waiting up to ``timeout`` seconds for the first one."""
        deadline = time.monotonic() + max(0.0, timeout)
        # Checking under the condition's lock closes the gap between "nothing yet" and "start waiting".
        async with self._changed:
            while True:
                found = self.since(chat_id, cursor)
                remaining = deadline - time.monotonic()
                if found or remaining <= 0 or self._closed:
                    return found
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), remaining)

    async def close(self) -> None:
        """Wake every waiter so long polls and streams end promptly at shutdown."""
        self._closed = True
        async with self._changed:
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed


def _size(delivery: Delivery) -> int:
    return len(delivery.text.encode("utf-8", "surrogatepass")) + _ITEM_OVERHEAD
