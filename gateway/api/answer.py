"""One API request's answer as it arrives: text deltas while its turn runs in this process, then the final.

Invariants: the final answer is the outbox's delivery (what is stored), never the live text; it is settled
once — by its delivery, or by its deadline (None); the deltas a caller reads add up to the stored reply
whenever no step before the last one said something — the final's tail not yet streamed is the last delta,
so a turn that ran in another process (or a command) arrives as one delta; text a step said before calling
tools stays shown, and the next step's text starts after a blank line. Deltas are kept only for a caller
that streams.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from agent_core.agent import ReplyDelta, ToolStarted
from gateway.webchat import ReplyTimeoutError

_STEP_BREAK = "\n\n"


@dataclass(frozen=True)
class Answer:
    """What answered a request: the delivered ``text`` and its ``kind`` ("reply", "command" or "error")."""

    text: str
    kind: str


class LiveAnswer:
    """The answer to one accepted request (a ``TurnFollower`` of its turn while it streams)."""

    def __init__(self, event_id: str, timeout: float, *, live: bool) -> None:
        self.event_id = event_id
        self.timeout = timeout
        self._live = live
        self._final: asyncio.Future[Answer | None] = asyncio.get_running_loop().create_future()
        self._deltas: asyncio.Queue[str | None] = asyncio.Queue()
        self._step = ""
        self._said = False

    @property
    def settled(self) -> bool:
        return self._final.done()

    def when_settled(self, callback: Callable[[], None]) -> None:
        self._final.add_done_callback(lambda _: callback())

    def on_event(self, event: object) -> None:
        """A turn event (``LiveChannel`` follower): reply text becomes deltas; a tool call starts a step."""
        if not self._live or self.settled:
            return
        if isinstance(event, ReplyDelta) and event.text:
            if self._said and not self._step:
                self._deltas.put_nowait(_STEP_BREAK)
            self._step += event.text
            self._said = True
            self._deltas.put_nowait(event.text)
        elif isinstance(event, ToolStarted):
            self._step = ""

    def settle(self, answer: Answer | None) -> None:
        """The delivered answer (None: the deadline passed first); later calls change nothing."""
        if self.settled:
            return
        if self._live and answer is not None and answer.kind != "error":
            tail = answer.text[len(self._step) :] if answer.text.startswith(self._step) else ""
            if tail:
                if self._said and not self._step:
                    self._deltas.put_nowait(_STEP_BREAK)
                self._deltas.put_nowait(tail)
        self._deltas.put_nowait(None)
        self._final.set_result(answer)

    async def deltas(self) -> AsyncIterator[str]:
        """The reply's text as it arrives, until the answer is settled (for a ``live`` request only)."""
        while (delta := await self._deltas.get()) is not None:
            yield delta

    async def answer(self) -> Answer:
        """The final answer; ``ReplyTimeoutError`` when the deadline passed first."""
        # Shielded: a caller that goes away does not cancel what the request's turn in the chat waits on.
        answer = await asyncio.shield(self._final)
        if answer is None:
            raise ReplyTimeoutError(f"no reply within {self.timeout:g} s")
        return answer
