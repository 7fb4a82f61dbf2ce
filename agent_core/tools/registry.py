"""The tool registry: the specs offered to the model, and the one safe way to run a tool call.

Invariants: ``specs()`` is sorted by name and each schema is a canonical (key-sorted) deep copy taken
at registration, so the tool list serialises to identical bytes on every call (prompt caching);
``call`` never raises for a tool-level problem — an unknown tool, bad arguments or a crashing handler
all come back as error results — so every tool_call in the transcript gets its tool_result; every
result is capped at the output budget before the model sees it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from agent_core.llm import ToolCall, ToolSpec, canonical_json
from agent_core.tools.arguments import check_arguments
from agent_core.tools.context import ToolContext
from agent_core.tools.errors import ToolRegistrationError
from agent_core.tools.result import DEFAULT_OUTPUT_BUDGET, ToolResult, cap_output
from agent_core.tools.tool import Tool

_log = logging.getLogger(__name__)
# The intersection of what Anthropic and OpenAI accept as a function name.
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ToolRegistry:
    """The tools of an agent; register at startup, then share across turns and tasks."""

    def __init__(self, tools: Iterable[Tool] = (), *, output_budget: int = DEFAULT_OUTPUT_BUDGET) -> None:
        if output_budget < 200:
            raise ValueError(f"output_budget must be at least 200 characters, got {output_budget}")
        self._tools: dict[str, Tool] = {}
        self._spec_json: dict[str, str] = {}
        self._specs: tuple[ToolSpec, ...] = ()
        self._budget = output_budget
        for tool in tools:
            self.register(tool)

    @property
    def output_budget(self) -> int:
        """The most characters of one result the model sees."""
        return self._budget

    def register(self, tool: Tool) -> None:
        """Add ``tool``; raises ToolRegistrationError for a taken or invalid name or a non-JSON schema."""
        if not _NAME.fullmatch(tool.name):
            raise ToolRegistrationError(f"invalid tool name {tool.name!r}: use 1-64 of [A-Za-z0-9_-]")
        if tool.name in self._tools:
            raise ToolRegistrationError(f"a tool named {tool.name!r} is already registered")
        try:
            canonical = canonical_json(dict(tool.parameters))
        except (TypeError, ValueError) as exc:
            raise ToolRegistrationError(f"schema of tool {tool.name!r} is not JSON: {exc}") from exc
        schema = json.loads(canonical)
        if schema.get("type") != "object":
            raise ToolRegistrationError(f"schema of tool {tool.name!r} must have type 'object'")
        self._tools[tool.name] = replace(tool, parameters=schema)
        # Specs get their own copy, so a caller editing one cannot change what arguments are checked against.
        self._spec_json[tool.name] = canonical
        self._specs = tuple(
            ToolSpec(name, self._tools[name].description, json.loads(self._spec_json[name]))
            for name in sorted(self._tools)
        )

    def names(self) -> tuple[str, ...]:
        """Registered tool names, sorted."""
        return tuple(sorted(self._tools))

    def specs(self, only: Iterable[str] | None = None) -> tuple[ToolSpec, ...]:
        """The specs to offer the model, sorted by name; ``only`` narrows them (e.g. a memory flush)."""
        if only is None:
            return self._specs
        wanted = frozenset(only)
        return tuple(spec for spec in self._specs if spec.name in wanted)

    async def dispatch(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run a model's tool call; arguments that were not valid JSON come back as an error result."""
        if call.arguments_error is not None:
            problem = f"Arguments for tool '{call.name}' were not usable: {call.arguments_error}."
            return cap_output(ToolResult.error(problem), self._budget)
        return await self.call(call.name, call.arguments, ctx)

    async def call(self, name: str, arguments: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        """Validate and run one tool call; never raises for tool-level problems."""
        return cap_output(await self._run(name, arguments, ctx), self._budget)

    async def _run(self, name: str, arguments: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self.names()) or "(none)"
            return ToolResult.error(f"Unknown tool '{name}'. Available tools: {available}.")
        problem = check_arguments(tool.parameters, arguments)
        if problem is not None:
            return ToolResult.error(problem)
        try:
            return await tool.handler(arguments, ctx)
        # The tool boundary: a handler bug must become a readable result, or the transcript would hold
        # a tool_call with no tool_result and the next model call would be rejected.
        except Exception as exc:
            _log.error(
                "tool %s failed (person=%s conversation=%s)",
                name,
                ctx.actor.person_id,
                ctx.actor.conversation_id,
                exc_info=True,
            )
            return ToolResult.error(f"tool {name} failed: {type(exc).__name__}: {exc}")
