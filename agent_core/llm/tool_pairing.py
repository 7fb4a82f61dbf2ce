"""Last-line repair of tool call/result pairing in a request view, identical for every provider.

Invariant delivered: every tool result follows the assistant message that issued its call, and every
issued call has exactly one result before the next non-tool message. Callers are expected to send
well-paired histories already (compression never splits a pair); this pass only keeps a damaged
history (a crash between a call and its result) from failing every later request with a 400. It is a
pure function of the messages, so a repaired history yields the same bytes on every turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from agent_core.llm.messages import ChatMessage

__all__ = ["MISSING_RESULT_TEXT", "pair_tool_messages"]

MISSING_RESULT_TEXT = "(no result recorded: the tool call was interrupted)"

_log = logging.getLogger(__name__)


def pair_tool_messages(messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
    """Drop orphan tool results and give every unanswered tool call a stub result."""
    out: list[ChatMessage] = []
    open_calls: list[tuple[str, str]] = []  # (id, name) issued by the last assistant, not yet answered
    for message in messages:
        if message.role == "tool":
            match = next((c for c in open_calls if c[0] == message.tool_call_id), None)
            if match is None:
                _log.warning("dropping tool result %r with no matching call", message.tool_call_id)
                continue
            open_calls.remove(match)
            out.append(message)
            continue
        out.extend(_stubs(open_calls))
        open_calls = [(c.id, c.name) for c in message.tool_calls] if message.role == "assistant" else []
        out.append(message)
    out.extend(_stubs(open_calls))
    return tuple(out)


def _stubs(open_calls: list[tuple[str, str]]) -> list[ChatMessage]:
    return [
        ChatMessage(role="tool", content=MISSING_RESULT_TEXT, tool_call_id=call_id, name=name)
        for call_id, name in open_calls
    ]
