"""One claimed job from claim to completion: run the turn, watch for /stop and interrupts, queue the reply.

Invariants: the reply's outbox row and the job's completion are ONE transaction keyed by the job id; a
job re-claimed after a crash never answers twice (if the previous run already stored its final reply,
that stored reply is queued instead of calling the model again) — the same rule delivers a scheduled
message, which its job's claim puts at the tip as the answer (``gateway.storage.schedules``); interrupts
are honoured only at a safe point — while the turn is suspended between events, never inside one of its
writes; a turn that fails in any way still gives the user a short error reply — except when the database
went out of reach (or dropped the connection mid-write): then the lane ends without closing the job, whose
lease runs out, and the job is claimed again (an attempt counted) and answered once the database is back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from agent_core.actor import Actor
from agent_core.agent import TurnFailed, TurnFinished
from agent_core.storage.errors import StateUnavailableError
from agent_core.storage.records import NewMessage
from gateway.storage.queue import ClaimedJob, Interrupt, JobReply, TipTail, TurnQueueRepository

from .busy_policy import BusyPolicy, Cut

_LOG = logging.getLogger("mnemogate.queue")
ERROR_REPLY = "Sorry — something went wrong while I was answering. Please try again in a moment."


class TurnAgent(Protocol):
    """What a lane needs of the turn loop (``agent_core.agent.TurnRunner``).

    Only the final ``TurnFinished``/``TurnFailed`` matters here; other events are safe points.
    """

    def run(self, actor: Actor) -> AsyncIterator[object]: ...


@dataclass(frozen=True)
class LaneOutcome:
    """How a lane ended: ``done``, ``failed``, ``interrupted``, ``stopped``, ``recovered`` or ``lost``."""

    job_id: int
    conversation_id: str
    result: str


class TurnLane:
    """Runs one job; create one per claim."""

    def __init__(
        self,
        *,
        queue: TurnQueueRepository,
        agent: TurnAgent,
        holder: str,
        job: ClaimedJob,
        check_every_s: float,
        busy_policy: BusyPolicy,
    ) -> None:
        self._queue = queue
        self._agent = agent
        self._holder = holder
        self.job = job
        self._check_every_s = check_every_s
        self._busy = busy_policy
        # The claim cleared the job's flag, so the first look is one interval in, not at the first event.
        self._next_check = time.monotonic() + check_every_s

    async def run(self) -> LaneOutcome:
        try:
            return await self._run()
        except StateUnavailableError as exc:
            if not exc.damaged:
                # Neither the answer nor an error reply can be stored now, and a write may have half
                # happened: the job's lease runs out and it runs again (a stored final reply is just queued).
                raise
            return await self._failed()
        except Exception:
            return await self._failed()

    async def _failed(self) -> LaneOutcome:
        """The lane boundary: whatever broke, the user gets an error reply and the job is closed."""
        _LOG.error("turn for job %d failed unexpectedly", self.job.id, exc_info=True)
        row = NewMessage(role="assistant", content=ERROR_REPLY, author="mnemogate")
        return await self._finish("failed", "error", JobReply(ERROR_REPLY, kind="error", append=row))

    async def _run(self) -> LaneOutcome:
        tail = self.job.tail
        if tail is not None and tail.role == "assistant" and not tail.has_tool_calls:
            return await self._recover(tail)
        actor = self.job.actor.in_conversation(self.job.conversation_id)
        final: TurnFinished | TurnFailed | None = None
        events = self._agent.run(actor)
        try:
            async for event in events:
                if isinstance(event, TurnFinished | TurnFailed):
                    final = event
                    break
                cut = self._busy.on_interrupt(await self._interrupt())
                if cut is not None:
                    return await self._cut(cut)
        finally:
            # Closing the suspended generator cancels the turn here, at a safe point, not inside a write.
            if isinstance(events, AsyncGenerator):
                await events.aclose()
        if final is None:
            raise RuntimeError("the turn ended without a final event")
        if isinstance(final, TurnFailed):
            reply = JobReply(final.text, kind="error", message_id=final.message_id)
            return await self._finish("failed", final.reason, reply)
        return await self._finish("done", None, JobReply(final.text, message_id=final.message_id))

    async def _recover(self, tail: TipTail) -> LaneOutcome:
        """The tip already ends with this job's answer — a previous run stored it and died before queuing
        it, or it is a scheduled message — so queue that answer, once, without calling the model."""
        reply = None if tail.queued else JobReply(tail.content or "", message_id=tail.message_id)
        outcome = await self._finish("done", None if reply else "nothing pending", reply)
        return LaneOutcome(outcome.job_id, outcome.conversation_id, "recovered")

    async def _cut(self, cut: Cut) -> LaneOutcome:
        """End the turn as the busy policy said: unanswered, with its note recorded but never sent."""
        note = (
            None if cut.note is None else NewMessage(role="assistant", content=cut.note, author="mnemogate")
        )
        return await self._finish("done", cut.result, None, note=note)

    async def _interrupt(self) -> Interrupt:
        now = time.monotonic()
        if now < self._next_check:
            return Interrupt.NONE
        self._next_check = now + self._check_every_s
        return await self._queue.interrupt(self.job.id)

    async def _finish(
        self, state: str, error: str | None, reply: JobReply | None, *, note: NewMessage | None = None
    ) -> LaneOutcome:
        mine = await self._queue.finish(
            self.job.id, self._holder, state=state, error=error, reply=reply, note=note
        )
        if not mine:
            return LaneOutcome(self.job.id, self.job.conversation_id, "lost")
        result = error if error in ("stopped", "interrupted") else state
        return LaneOutcome(self.job.id, self.job.conversation_id, result or state)
