"""Who a tool call acts for: the per-call identity every handler scopes its work to.

Invariant: handlers take the person, admin flag and conversation from here, never from model-supplied
arguments, so a model can never act on another person's data by naming them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_core.memory import FailureBreaker


@dataclass(frozen=True)
class ToolContext:
    """The caller of one turn's tool calls; ``breaker`` is shared by every memory call of the turn."""

    person_id: str
    conversation_id: str | None
    is_admin: bool = False
    actor: str = "agent"
    breaker: FailureBreaker = field(default_factory=FailureBreaker)
