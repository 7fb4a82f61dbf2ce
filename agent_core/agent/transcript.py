"""Between stored rows and the model's view: records -> request-view messages, model output -> new rows.

The request view substitutes ``api_content`` for ``content`` wherever a row has one, so every later
call replays the exact bytes of earlier calls. Tool calls are stored as ``{"id", "name", "arguments"}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agent_core.llm import ChatMessage, ToolCall
from agent_core.storage import MessageRecord, NewMessage

_VIEW_ROLES = ("user", "assistant", "tool", "system")


def request_view(records: Iterable[MessageRecord]) -> tuple[ChatMessage, ...]:
    """The conversation as the model sees it (system prompt excluded: it travels separately)."""
    view: list[ChatMessage] = []
    for record in records:
        if record.role not in _VIEW_ROLES:
            continue
        text = record.api_content if record.api_content is not None else (record.content or "")
        calls = tuple(ToolCall.from_stored(raw) for raw in record.tool_calls or ())
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
    return [call.to_stored() for call in calls]


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
