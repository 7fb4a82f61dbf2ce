"""The offline model: deterministic, network-free, labelled in every reply, and it drives the tool loop.

Given the newest user message it calls the real tools (see :mod:`offline_intents`), only ones the
request offers; once tool results are the newest messages it answers with a sentence built from them
(stored entries appear verbatim). Otherwise it says plainly that it cannot think without an API key
and echoes the message. Every text reply starts with :data:`OFFLINE_LABEL`; a tool-calling step has
no text at all, so the label is never doubled in what the user sees.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from types import MappingProxyType, TracebackType
from typing import Self

from agent_core.llm.client import LLMRequest
from agent_core.llm.events import LLMEvent, StopEvent, TextDelta, ToolCallEvent, UsageEvent
from agent_core.llm.messages import ChatMessage, ToolCall, canonical_json
from agent_core.llm.offline_intents import Intent, parse_intent, strip_recall_fence

__all__ = ["OFFLINE_LABEL", "OfflineClient", "plan_offline_reply"]

OFFLINE_LABEL = "[offline model] "
MEMORY_TOOL = "memory"
SEARCH_TOOL = "session_search"
SCHEDULE_TOOL = "schedule"
_STORE_NAMES = MappingProxyType({"user": "your profile", "memory": "my notes"})
_RESULT_PREVIEW_CHARS = 800


class OfflineClient:
    name = "offline"

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        text, calls = plan_offline_reply(request)
        words = text.split(" ") if text else []
        third = max(len(words) // 3, 1)
        for start in range(0, len(words), third):
            chunk = " ".join(words[start : start + third])
            yield TextDelta(chunk if start + third >= len(words) else chunk + " ")
        for call in calls:
            yield ToolCallEvent(call)
        yield UsageEvent(input_tokens=_estimate_prompt(request), output_tokens=_estimate_reply(text, calls))
        yield StopEvent("tool_use" if calls else "end_turn")


def plan_offline_reply(request: LLMRequest) -> tuple[str, tuple[ToolCall, ...]]:
    """The reply text and tool calls for ``request``; a pure function of it."""
    messages = request.messages
    if messages and messages[-1].role == "tool":
        return OFFLINE_LABEL + _answer_from_results(messages), ()
    said = next((m.content for m in reversed(messages) if m.role == "user"), "")
    intent = parse_intent(said)
    tools = request.tool_names()
    call_id = f"offline_{len(messages)}"
    if intent is None:
        return _echo(said), ()
    if intent.kind in ("remind", "reminders", "cancel_reminder"):
        if SCHEDULE_TOOL not in tools:
            return OFFLINE_LABEL + "I can't set reminders here (no schedule tool).", ()
        return "", (ToolCall(f"{call_id}_0", SCHEDULE_TOOL, _schedule_arguments(intent)),)
    if intent.kind == "search":
        if SEARCH_TOOL not in tools:
            return OFFLINE_LABEL + "I can't search past conversations here (no search tool).", ()
        return "", (ToolCall(f"{call_id}_0", SEARCH_TOOL, {"query": intent.subject}),)
    if MEMORY_TOOL not in tools:
        return OFFLINE_LABEL + "I can't use memory here (no memory tool).", ()
    return _memory_calls(intent, call_id)


def _schedule_arguments(intent: Intent) -> dict[str, object]:
    if intent.kind == "reminders":
        return {"action": "list"}
    if intent.kind == "cancel_reminder":
        return {"action": "cancel", "id": int(intent.subject)}
    key, _, when = intent.when.partition(" ")
    return {"action": "create", key: when, "message": f"⏰ Reminder: {intent.subject}"}


def _memory_calls(intent: Intent, call_id: str) -> tuple[str, tuple[ToolCall, ...]]:
    if intent.kind == "remember":
        target = "user" if intent.about_user else "memory"
        args = {"action": "add", "target": target, "content": intent.subject}
        return "", (ToolCall(f"{call_id}_0", MEMORY_TOOL, args),)
    if intent.kind == "forget":
        # The phrase does not say which store holds it; asking both is honest and harmless.
        calls = tuple(
            ToolCall(
                f"{call_id}_{i}", MEMORY_TOOL, {"action": "remove", "target": t, "old_text": intent.subject}
            )
            for i, t in enumerate(("user", "memory"))
        )
        return "", calls
    calls = tuple(
        ToolCall(f"{call_id}_{i}", MEMORY_TOOL, {"action": "read", "target": t})
        for i, t in enumerate(("user", "memory"))
    )
    return "", calls


def _echo(said: str) -> str:
    typed = " ".join(strip_recall_fence(said).split()) or "(nothing)"
    return (
        OFFLINE_LABEL + f"I can't think without a model API key; you said: {typed}\n"
        "I can still: 'remember that …', 'forget …', 'what do you remember', 'search for …', "
        "'remind me in 10 minutes to …'."
    )


def _answer_from_results(messages: Sequence[ChatMessage]) -> str:
    results: list[ChatMessage] = []
    index = len(messages) - 1
    while index >= 0 and messages[index].role == "tool":
        results.insert(0, messages[index])
        index -= 1
    issued = messages[index].tool_calls if index >= 0 else ()
    calls = {call.id: call for call in issued}
    pairs = [(calls.get(r.tool_call_id or ""), r.content) for r in results]
    actions = {str(c.arguments.get("action")) for c, _ in pairs if c is not None and c.name == MEMORY_TOOL}
    if actions == {"remove"}:
        return _answer_forget(pairs)
    return " ".join(_answer_one(call, content) for call, content in pairs)


def _answer_one(call: ToolCall | None, content: str) -> str:
    parsed = _parse(content)
    error = _error_of(parsed, content)
    name = call.name if call else "tool"
    if error:
        return f"The {name} tool reported an error: {error}."
    if call is not None and call.name == SCHEDULE_TOOL and isinstance(parsed, dict):
        return _answer_schedule(parsed)
    if call is None or call.name not in (MEMORY_TOOL, SEARCH_TOOL):
        return f"The {name} tool returned: {_preview(content)}"
    if call.name == SEARCH_TOOL:
        return (
            f"Search results for {call.arguments.get('query')!r}: {_preview(_search_text(parsed, content))}"
        )
    action, target = call.arguments.get("action"), str(call.arguments.get("target"))
    store = _STORE_NAMES.get(target, target)
    if action == "add":
        return f"Saved to {store}: {call.arguments.get('content')}."
    if action == "read":
        entries = parsed.get("entries") if isinstance(parsed, dict) else None
        if isinstance(entries, list):
            listed = "; ".join(str(e) for e in entries) if entries else "(nothing saved)"
            return f"In {store}: {listed}."
        return f"In {store}: {_preview(content)}"
    return f"Done ({action} in {store})."


def _answer_schedule(parsed: dict[str, object]) -> str:
    if parsed.get("next_run") is not None:
        return f"Okay — reminder #{parsed.get('id')} is set for {parsed['next_run']}."
    return str(parsed.get("message") or "Done.")


def _answer_forget(pairs: list[tuple[ToolCall | None, str]]) -> str:
    subject = next((str(c.arguments.get("old_text")) for c, _ in pairs if c is not None), "")
    errors = [_error_of(_parse(content), content) for _, content in pairs]
    if any(not e for e in errors):
        return f"Forgot: {subject}."
    return f"I couldn't find {subject!r} in memory: {errors[-1]}."


def _parse(content: str) -> object:
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        return None


def _error_of(parsed: object, content: str) -> str:
    if isinstance(parsed, dict):
        if parsed.get("success") is False or parsed.get("ok") is False or "error" in parsed:
            return str(parsed.get("error") or parsed.get("message") or "unknown error").rstrip(".")
        return ""
    lowered = content.strip().lower()
    return content.strip().rstrip(".") if lowered.startswith(("error", "failed")) else ""


def _search_text(parsed: object, content: str) -> str:
    results = parsed.get("results") if isinstance(parsed, dict) else None
    if not isinstance(results, list):
        return content
    if not results:
        return "nothing found"
    return " | ".join(_result_line(item) for item in results)


def _result_line(item: object) -> str:
    """One conversation of the results: where and when, then its summary or its excerpts verbatim."""
    if not isinstance(item, dict):
        return canonical_json(item)
    where = " on ".join(str(item[key]) for key in ("date", "platform") if isinstance(item.get(key), str))
    said = _said(item)
    if said is None:
        return canonical_json(item)
    return f"{where}: {said}" if where else said


def _said(item: dict[str, object]) -> str | None:
    for key in ("summary", "snippet", "excerpt", "text", "content"):
        value = item.get(key)
        if isinstance(value, str):
            return value
    snippets = item.get("snippets")
    if isinstance(snippets, list) and snippets:
        return " … ".join(_snippet_line(snippet) for snippet in snippets)
    title = item.get("title")
    return title if isinstance(title, str) else None


def _snippet_line(snippet: object) -> str:
    if isinstance(snippet, dict) and isinstance(snippet.get("text"), str):
        role = snippet.get("role")
        return f"{role}: {snippet['text']}" if isinstance(role, str) else str(snippet["text"])
    return canonical_json(snippet)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _RESULT_PREVIEW_CHARS else flat[: _RESULT_PREVIEW_CHARS - 1] + "…"


def _estimate_prompt(request: LLMRequest) -> int:
    chars = len(request.system) + sum(len(m.content) + 16 for m in request.messages)
    chars += sum(
        len(t.name) + len(t.description) + len(canonical_json(dict(t.parameters))) for t in request.tools
    )
    return max(chars // 4, 1)


def _estimate_reply(text: str, calls: tuple[ToolCall, ...]) -> int:
    return max((len(text) + sum(len(c.arguments_json()) for c in calls)) // 4, 1)
