"""The turn loop's view of the tool registry: specs to offer, and calls scoped to one turn's person.

Each turn gets a fresh ``ToolContext`` (and so a fresh memory failure breaker); the identity comes from
the turn's ``Actor``, never from model-supplied arguments.
"""

from __future__ import annotations

from agent_core.actor import Actor
from agent_core.llm import ToolCall, ToolSpec
from agent_core.tools import ToolContext, ToolRegistry, ToolResult


class TurnTools:
    """The tools of one turn."""

    def __init__(self, registry: ToolRegistry, context: ToolContext) -> None:
        self._registry = registry
        self._context = context

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._registry.specs()

    async def call(self, call: ToolCall) -> ToolResult:
        """Run one call; tool-level problems come back as error results, never as exceptions."""
        return await self._registry.dispatch(call, self._context)


class Toolbox:
    """Hands each turn its scoped tools."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def names(self) -> frozenset[str]:
        return frozenset(self.registry.names())

    def for_turn(self, actor: Actor) -> TurnTools:
        return TurnTools(self.registry, ToolContext(actor))
