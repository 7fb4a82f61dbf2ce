"""Who a tool call acts for, and the per-turn state its handlers share: the ``Actor`` and the breaker.

Invariant: handlers take the person, admin flag and conversation from ``actor``, never from model-supplied
arguments, so a model can never act on another person's data by naming them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_core.actor import Actor
from agent_core.memory import FailureBreaker


@dataclass(frozen=True)
class ToolContext:
    """The caller of one turn's tool calls; ``breaker`` is shared by every memory call of the turn."""

    actor: Actor
    breaker: FailureBreaker = field(default_factory=FailureBreaker)
