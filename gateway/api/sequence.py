"""ChatSequence: the API's requests of one conversation take turns, first come first served.

Invariants: at most one slot per chat is held at a time; a slot is released by whoever holds it — not by
the task that asked for it — so an API request that stopped waiting (timed out, client gone) keeps the
order intact: the next request still waits for the one before, never overtakes it; a chat with no slot
held or awaited keeps no entry, so memory is bounded by the chats in use.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


@dataclass
class Slot:
    """This request's turn in its chat; ``release`` once its answer arrived or it gave up."""

    _sequence: ChatSequence
    chat_id: str
    _done: asyncio.Future[None]

    def release(self) -> None:
        if not self._done.done():
            self._done.set_result(None)
        self._sequence.forget(self.chat_id, self._done)


class ChatSequence:
    """Per-chat FIFO of slots."""

    def __init__(self) -> None:
        self._tails: dict[str, asyncio.Future[None]] = {}
        self.waiting = 0

    async def enter(self, chat_id: str, timeout: float) -> Slot | None:  # noqa: ASYNC109 - a deadline
        """This chat's next slot once every earlier one is released; None if that took over ``timeout``."""
        previous = self._tails.get(chat_id)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tails[chat_id] = mine
        slot = Slot(self, chat_id, mine)
        if previous is None or previous.done():
            return slot
        self.waiting += 1
        try:
            await asyncio.wait_for(asyncio.shield(previous), timeout)
        except TimeoutError:
            # Giving up must not let the next request overtake the one still running before us.
            previous.add_done_callback(lambda _: slot.release())
            return None
        except asyncio.CancelledError:
            previous.add_done_callback(lambda _: slot.release())
            raise
        finally:
            self.waiting -= 1
        return slot

    def forget(self, chat_id: str, done: asyncio.Future[None]) -> None:
        """Drop the chat's entry if ``done`` is its newest slot (called by ``Slot.release``)."""
        if self._tails.get(chat_id) is done:
            del self._tails[chat_id]

    def __len__(self) -> int:
        return len(self._tails)
