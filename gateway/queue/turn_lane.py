"""One claimed job from claim to completion: run the turn, watch for /stop and interrupts, queue the reply.

Invariants: the reply's outbox row and the job's completion are ONE transaction keyed by the job id; a
job re-claimed after a crash never answers twice (if the previous run already stored its final reply,
that stored reply is queued instead of calling the model again); interrupts are honoured only at a safe
point — while the turn is suspended between events, never inside one of its writes; a turn that fails in
any way still gives the user a short error reply.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from agent_core.agent import TurnFailed, TurnFinished, TurnScope
from agent_core.storage.sqlite import NewMessage, StateStore
from agent_core.storage.sqlite.messages import PreparedMessage, prepare
from gateway.storage.sqlite.jobs import (
    INTERRUPT_STOP,
    ClaimedJob,
    JobReply,
    TipTail,
    finish_job,
    interrupt_flag,
    tip_tail,
)
from gateway.storage.sqlite.outbox import is_message_queued

_LOG = logging.getLogger("mnemogate.queue")
STOPPED_NOTE = "(Stopped at the user's request before finishing.)"
ERROR_REPLY = "Sorry — something went wrong while I was answering. Please try again in a moment."


class TurnAgent(Protocol):
    """What a lane needs of the turn loop (``agent_core.agent.TurnRunner``).

    Only the final ``TurnFinished``/``TurnFailed`` matters here; other events are safe points.
    """

    def run(self, scope: TurnScope) -> AsyncIterator[object]: ...


@dataclass(frozen=True)
class LaneOutcome:
    """How a lane ended: ``done``, ``failed``, ``interrupted``, ``stopped``, ``recovered`` or ``lost``."""

    job_id: int
    conversation_id: str
    result: str


class TurnLane:
    """Runs one job; create one per claim."""

    def __init__(
        self, *, state: StateStore, agent: TurnAgent, holder: str, job: ClaimedJob, check_every_s: float
    ) -> None:
        self._state = state
        self._agent = agent
        self._holder = holder
        self.job = job
        self._check_every_s = check_every_s
        self._next_check = 0.0

    async def run(self) -> LaneOutcome:
        try:
            return await self._run()
        except Exception:
            # The lane boundary: whatever broke, the user gets an error reply and the job is closed.
            _LOG.error("turn for job %d failed unexpectedly", self.job.id, exc_info=True)
            row = prepare(NewMessage(role="assistant", content=ERROR_REPLY, author="mnemogate"), time.time())
            return await self._finish("failed", "error", JobReply(ERROR_REPLY, kind="error", append=row))

    async def _run(self) -> LaneOutcome:
        tail: TipTail | None = await self._state.run_read(lambda c: tip_tail(c, self.job.conversation_id))
        if tail is not None and tail.role == "assistant" and not tail.has_tool_calls:
            return await self._recover(tail)
        scope = TurnScope(
            conversation_id=self.job.conversation_id,
            person_id=self.job.person_id or "",
            is_admin=self.job.is_admin,
            platform=self.job.platform or "unknown",
        )
        final: TurnFinished | TurnFailed | None = None
        events = self._agent.run(scope)
        try:
            async for event in events:
                if isinstance(event, TurnFinished | TurnFailed):
                    final = event
                    break
                flag = await self._interrupt_flag()
                if flag == INTERRUPT_STOP:
                    # Recorded, not sent: the next turn must not pick the stopped request up again.
                    row = NewMessage(role="assistant", content=STOPPED_NOTE, author="mnemogate")
                    return await self._finish("done", "stopped", None, note=prepare(row, time.time()))
                if flag:
                    return await self._finish("done", "interrupted", None)
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
        """The previous run stored its reply but died before queuing it: queue that reply, once."""
        queued = await self._state.run_read(lambda c: is_message_queued(c, tail.message_id))
        reply = None if queued else JobReply(tail.content or "", message_id=tail.message_id)
        outcome = await self._finish("done", None if reply else "nothing pending", reply)
        return LaneOutcome(outcome.job_id, outcome.conversation_id, "recovered")

    async def _interrupt_flag(self) -> int:
        now = time.monotonic()
        if now < self._next_check:
            return 0
        self._next_check = now + self._check_every_s
        return await self._state.run_read(lambda c: interrupt_flag(c, self.job.id))

    async def _finish(
        self, state: str, error: str | None, reply: JobReply | None, *, note: PreparedMessage | None = None
    ) -> LaneOutcome:
        now = time.time()
        mine = await self._state.run_write(
            lambda c: finish_job(
                c, self.job.id, self._holder, now=now, state=state, error=error, reply=reply, note=note
            )
        )
        result = (error if error in ("stopped", "interrupted") else state) if mine else "lost"
        return LaneOutcome(self.job.id, self.job.conversation_id, result or state)
