"""The agent's turn loop: frozen per-segment prompts, the request view, model and tool steps.

Public surface: ``TurnRunner`` and what it needs (``SegmentPrompts``, ``Toolbox``, ``AgentSettings``,
the ``RecallSource`` seam, an optional ``agent_core.compression.Compressor``; a turn runs for an
``agent_core.actor.Actor``) and the events a turn yields (``AgentEvent``: the ``TurnEvent``s plus a
``CompressionOutcome`` when it compressed).
"""

from agent_core.agent.client_context import (
    ClientTurn,
    client_context_block,
    context_line,
    given_context,
    with_client_context,
)
from agent_core.agent.events import ReplyDelta, ToolFinished, ToolStarted, TurnEvent, TurnFailed, TurnFinished
from agent_core.agent.fence import fence_recall, sanitize_recall, with_recall
from agent_core.agent.prompts import SegmentPrompts
from agent_core.agent.recall import RecallSource, TurnObserver, screened_recall
from agent_core.agent.settings import AgentSettings
from agent_core.agent.toolbox import Toolbox, TurnTools
from agent_core.agent.turn import AgentEvent, TurnRunner

__all__ = [
    "AgentEvent",
    "AgentSettings",
    "ClientTurn",
    "RecallSource",
    "ReplyDelta",
    "SegmentPrompts",
    "ToolFinished",
    "ToolStarted",
    "Toolbox",
    "TurnEvent",
    "TurnFailed",
    "TurnFinished",
    "TurnObserver",
    "TurnRunner",
    "TurnTools",
    "client_context_block",
    "context_line",
    "fence_recall",
    "given_context",
    "sanitize_recall",
    "screened_recall",
    "with_client_context",
    "with_recall",
]
