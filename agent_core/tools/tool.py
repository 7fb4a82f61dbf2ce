"""One tool: its name, description, JSON-schema parameters and the async handler that runs it.

Invariant: services a handler needs (memory, skills, search) are bound when the tool is built, so new
tools plug into the registry without changing the registry or ``ToolContext``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from agent_core.tools.context import ToolContext
from agent_core.tools.result import ToolResult

ToolHandler = Callable[[Mapping[str, object], ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model; ``parameters`` is a JSON schema of type object."""

    name: str
    description: str
    parameters: Mapping[str, object]
    handler: ToolHandler
