"""The usage meter: turns what a model call reported into the ``ModelCall`` the usage log records — which
model, why it was made, and its cost priced from the price table in force — and records the auxiliary calls a
turn causes (search summaries, provider extraction) against that turn's segment.

Invariants: every model call the agent makes (turn steps, compression summaries, memory flushes, search
summaries, provider extraction) is priced here and nowhere else; an unpriced model's cost is None; a call
that reported no tokens is not recorded; an auxiliary call is charged to the tip segment of the conversation
that caused it, or to nobody when that conversation is gone (it is logged, never raised to the caller).
"""

from __future__ import annotations

import logging

from agent_core.llm import UsageEvent
from agent_core.llm.prices import PriceTable, model_id
from agent_core.storage import AgentStorage, ModelCall, TokenUsage, UnknownSegmentError, UsageKind

__all__ = ["UsageMeter", "UsageRecorder"]

_LOG = logging.getLogger("mnemogate.usage")


class UsageMeter:
    """Prices model calls with one price table; shared by every component that calls a model."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.prices = prices or PriceTable()

    def call(self, client_name: str, kind: UsageKind, spent: TokenUsage | UsageEvent) -> ModelCall:
        """The usage-log record of one call by the client named ``client_name`` that spent ``spent``."""
        model = model_id(client_name)
        counts = (spent.input_tokens, spent.output_tokens, spent.cache_read_tokens, spent.cache_write_tokens)
        return ModelCall(
            *counts,
            cost_usd=self.prices.cost(model, *counts),
            model=model,
            kind=kind,
        )


class UsageRecorder:
    """Records a turn's auxiliary model calls against the conversation's tip segment, priced by ``meter``."""

    def __init__(self, state: AgentStorage, meter: UsageMeter | None = None) -> None:
        self._state = state
        self.meter = meter or UsageMeter()

    async def record(
        self, conversation_id: str, client_name: str, kind: UsageKind, spent: TokenUsage | UsageEvent
    ) -> None:
        """Charge one call of ``client_name`` to ``conversation_id``'s current segment as ``kind``."""
        call = self.meter.call(client_name, kind, spent)
        if call.spent_nothing:
            return
        try:
            tip = await self._state.resolve_tip(conversation_id)
            await self._state.add_usage(tip.id, call)
        except UnknownSegmentError:
            _LOG.warning(
                "a %s call of %s was not recorded: conversation %s is gone", kind, call.model, conversation_id
            )
