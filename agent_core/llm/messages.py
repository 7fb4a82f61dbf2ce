"""Provider-neutral conversation types: chat messages, tool calls and tool specs.

All are frozen dataclasses. A :class:`ToolCall` always carries a parsed ``arguments`` mapping; when the
model produced arguments that are not a JSON object, the mapping is empty and the original text is
kept in ``raw_arguments`` with the reason in ``arguments_error``, so the tool loop can report the
problem to the model instead of guessing. Treat the mappings as read-only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ChatMessage", "Role", "ToolCall", "ToolSpec", "canonical_json"]

Role = Literal["system", "user", "assistant", "tool"]


def canonical_json(value: object) -> str:
    """Serialise ``value`` the one way used on the wire, so equal data always gives equal bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ToolCall:
    """One complete tool invocation requested by the model."""

    id: str
    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)
    raw_arguments: str | None = None
    arguments_error: str | None = None

    @classmethod
    def from_json(cls, id: str, name: str, raw: str) -> ToolCall:
        """Parse streamed argument text; an empty string means no arguments."""
        if not raw.strip():
            return cls(id=id, name=name, arguments={})
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            return cls(id, name, {}, raw, f"arguments are not valid JSON: {exc.msg} at position {exc.pos}")
        if not isinstance(parsed, dict):
            return cls(id, name, {}, raw, f"arguments must be a JSON object, got {type(parsed).__name__}")
        return cls(id=id, name=name, arguments=parsed)

    @classmethod
    def from_stored(cls, raw: Mapping[str, object]) -> ToolCall:
        """A call as persisted in ``messages.tool_calls`` (see :meth:`to_stored`)."""
        arguments = raw.get("arguments")
        raw_arguments = raw.get("raw_arguments")
        error = raw.get("arguments_error")
        return cls(
            id=str(raw.get("id", "")),
            name=str(raw.get("name", "")),
            arguments=arguments if isinstance(arguments, dict) else {},
            raw_arguments=raw_arguments if isinstance(raw_arguments, str) else None,
            arguments_error=error if isinstance(error, str) else None,
        )

    def to_stored(self) -> dict[str, object]:
        """The JSON-able form persisted in ``messages.tool_calls``."""
        stored: dict[str, object] = {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}
        if self.arguments_error is not None:
            stored["raw_arguments"] = self.raw_arguments
            stored["arguments_error"] = self.arguments_error
        return stored

    def arguments_json(self) -> str:
        """The arguments as canonical JSON (what is replayed to the provider on later turns)."""
        return canonical_json(dict(self.arguments))


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description and a JSON-schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, object]


@dataclass(frozen=True)
class ChatMessage:
    """One conversation message as the model should see it (already the request view's bytes).

    ``tool_calls`` only on assistant messages; ``tool_call_id`` (and optionally ``name``, the tool's
    name) only on tool results.
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
