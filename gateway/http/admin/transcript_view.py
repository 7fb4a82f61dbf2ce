"""What a conversation page shows of stored messages: tool calls beside their results, handoff summaries and
recalled context marked as such, and a word diff for memory changes.

Invariants: every text comes out as plain text for the (autoescaping) templates — nothing here builds
markup; a tool result is shown under the call it answers when both are on the page, and on its own (with
its call id) when its call is on another page; recalled context is what the model was sent besides what
the person said (the ``api_content`` sidecar), never mixed into the message itself.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_core.agent.fence import CLOSE_TAG, OPEN_TAG
from agent_core.compression import is_summary, unwrap
from agent_core.storage import MessageRecord

from .rendering import pretty_json

_FENCE = re.compile(re.escape(OPEN_TAG) + r".*?" + re.escape(CLOSE_TAG), re.DOTALL)
_WORDS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class ToolCallView:
    """One tool call with its arguments and (when found) its result."""

    call_id: str
    name: str
    arguments: str
    result: str | None = None
    result_at: float | None = None


@dataclass(frozen=True)
class MessageView:
    """One message as the page shows it; ``kind`` is message, summary (compression handoff) or tool_result."""

    id: int
    segment_id: str
    role: str
    at: float
    author: str | None
    text: str
    kind: str = "message"
    recalled: str | None = None
    sent_differently: str | None = None
    reasoning: str | None = None
    calls: tuple[ToolCallView, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    opens_segment: bool = False


@dataclass(frozen=True)
class DiffPart:
    """A run of words: kept (``same``), removed (``del``) or added (``ins``)."""

    op: str
    text: str


@dataclass(frozen=True)
class MemoryChange:
    """An audit record's change as word runs (old → new)."""

    parts: tuple[DiffPart, ...] = field(default_factory=tuple)


def transcript_view(
    records: Sequence[MessageRecord], *, previous_segment: str | None = None
) -> list[MessageView]:
    """The page's messages, oldest first; ``previous_segment``: the segment of the message before the page."""
    results = {r.tool_call_id: r for r in records if r.role == "tool" and r.tool_call_id}
    shown_results: set[str] = set()
    views: list[MessageView] = []
    segment = previous_segment
    for record in records:
        calls = tuple(_call(call, results) for call in record.tool_calls or ())
        shown_results.update(c.call_id for c in calls if c.result is not None)
        if record.role == "tool" and record.tool_call_id in shown_results:
            continue
        views.append(_view(record, calls, opens=record.session_id != segment))
        segment = record.session_id
    return views


def _call(raw: object, results: dict[str, MessageRecord]) -> ToolCallView:
    call = raw if isinstance(raw, dict) else {}
    call_id = str(call.get("id", ""))
    answer = results.get(call_id)
    return ToolCallView(
        call_id=call_id,
        name=str(call.get("name", "?")),
        arguments=pretty_json(call.get("arguments", {})),
        result=None if answer is None else pretty_json(answer.content or ""),
        result_at=None if answer is None else answer.created_at,
    )


def _view(record: MessageRecord, calls: tuple[ToolCallView, ...], *, opens: bool) -> MessageView:
    text = record.content or ""
    kind = "message"
    if is_summary(record):
        kind, text = "summary", unwrap(text)
    elif record.role == "tool":
        kind, text = "tool_result", pretty_json(text)
    recalled, differently = _sidecar(record)
    return MessageView(
        id=record.id,
        segment_id=record.session_id,
        role=record.role,
        at=record.created_at,
        author=record.author,
        text=text,
        kind=kind,
        recalled=recalled,
        sent_differently=differently,
        reasoning=record.reasoning or None,
        calls=calls,
        tool_call_id=record.tool_call_id,
        tool_name=record.tool_name,
        opens_segment=opens,
    )


def _sidecar(record: MessageRecord) -> tuple[str | None, str | None]:
    """(recalled context fenced into what the model was sent, or the whole sent text when it differs so)."""
    sent = record.api_content
    if not sent or sent == record.content:
        return None, None
    fences = _FENCE.findall(sent)
    if fences:
        return "\n\n".join(fences), None
    return None, sent


def summary_of(records: Sequence[MessageRecord]) -> str | None:
    """The handoff summary body among a segment's messages (the one compression wrote), if any."""
    for record in records:
        if is_summary(record):
            return unwrap(record.content or "")
    return None


def word_diff(old: str | None, new: str | None) -> MemoryChange:
    """``old`` → ``new`` as runs of kept, removed and added words (whitespace kept as written)."""
    before, after = _WORDS.findall(old or ""), _WORDS.findall(new or "")
    parts: list[DiffPart] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            parts.append(DiffPart("same", "".join(before[a1:a2])))
            continue
        if a2 > a1:
            parts.append(DiffPart("del", "".join(before[a1:a2])))
        if b2 > b1:
            parts.append(DiffPart("ins", "".join(after[b1:b2])))
    return MemoryChange(tuple(parts))
