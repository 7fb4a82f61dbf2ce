"""``ChatOrder``: messages of one chat pass the inbound pipeline one at a time, in the order they arrived.

Adapters hand each message over in its own task (discord.py runs every ``on_message`` as a task; a webhook
is one request each); the pipeline's awaits on state.db would otherwise let a later message of the same
chat overtake an earlier one and be stored, and shown to the model, first. Invariant: for one chat
(platform, workspace, chat, thread) hand-offs that entered in order leave in that order, because the turn
is taken before the first suspension point and ``asyncio.Lock`` serves its waiters first come, first
served; different chats never wait for each other; an idle chat holds no lock.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from gateway.contracts import ChatRef


@dataclass
class _Slot:
    lock: asyncio.Lock
    holders: int = 0  # the one inside plus those waiting


class ChatOrder:
    """One first-come-first-served turn per chat, for one event loop."""

    def __init__(self) -> None:
        self._slots: dict[tuple[str, str, str, str], _Slot] = {}

    @contextlib.asynccontextmanager
    async def turn(self, chat: ChatRef) -> AsyncIterator[None]:
        key = (chat.platform, chat.workspace or "", chat.chat_id, chat.thread_id or "")
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Slot(asyncio.Lock())
        slot.holders += 1
        try:
            async with slot.lock:
                yield
        finally:
            slot.holders -= 1
            if slot.holders == 0:
                del self._slots[key]

    def __len__(self) -> int:
        """Chats with a hand-off inside or waiting."""
        return len(self._slots)
