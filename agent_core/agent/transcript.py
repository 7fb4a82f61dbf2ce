"""Between stored rows and the model's view: records -> request-view messages, model output -> new rows.

The request view substitutes ``api_content`` for ``content`` wherever a row has one, so every later
call replays the exact bytes of earlier calls. Tool calls are stored as ``{"id", "name", "arguments"}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agent_core.llm import ChatMessage, ToolCall
from agent_core.state import MessageRecord, NewMessage

_VIEW_ROLES = ("user", "assistant", "tool", "system")


def request_view(records: Iterable[MessageRecord]) -> tuple[ChatMessage, ...]:
    """The conversation as the model sees it (system prompt excluded: it travels separately)."""
    view: list[ChatMessage] = []
    for record in records:
        if record.role not in _VIEW_ROLES:
            continue
        text = record.api_content if record.api_content is not None else (record.content or "")
        calls = tuple(_tool_call(raw) for raw in record.tool_calls or ())
        view.append(
            ChatMessage(
                role=record.role,  # type: ignore[arg-type]  # filtered to the Role literal above
                content=text,
                tool_calls=calls,
                tool_call_id=record.tool_call_id,
                name=record.tool_name if record.role == "tool" else None,
            )
        )
    return tuple(view)


def pending_user_messages(records: Sequence[MessageRecord]) -> list[MessageRecord]:
    """The user messages after the last assistant reply: what this turn must answer (coalesced)."""
    pending: list[MessageRecord] = []
    for record in reversed(records):
        if record.role == "user":
            pending.append(record)
        elif record.role in ("assistant", "tool"):
            break
    pending.reverse()
    return pending


def stored_tool_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """Tool calls as stored in ``messages.tool_calls``."""
    stored: list[dict[str, Any]] = []
    for call in calls:
        item: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": dict(call.arguments)}
        if call.arguments_error is not None:
            item["raw_arguments"] = call.raw_arguments
            item["arguments_error"] = call.arguments_error
        stored.append(item)
    return stored


def assistant_row(text: str, calls: Sequence[ToolCall], reasoning: str, author: str) -> NewMessage:
    return NewMessage(
        role="assistant",
        content=text,
        tool_calls=stored_tool_calls(calls) or None,
        reasoning=reasoning or None,
        author=author,
    )


def tool_row(call: ToolCall, content: str) -> NewMessage:
    return NewMessage(role="tool", content=content, tool_call_id=call.id, tool_name=call.name)


def _tool_call(raw: Mapping[str, Any]) -> ToolCall:
    arguments = raw.get("arguments")
    return ToolCall(
        id=str(raw.get("id", "")),
        name=str(raw.get("name", "")),
        arguments=arguments if isinstance(arguments, dict) else {},
        raw_arguments=raw.get("raw_arguments"),
        arguments_error=raw.get("arguments_error"),
    )
