"""The deterministic fallback summary, built locally from the compacted messages when the summariser fails.

Invariants: same section skeleton as a model summary; only facts present in the messages (the user's
own asks quoted, tool names and outcomes, the last visible reply, file paths) — nothing is inferred;
an earlier summary is carried forward (updated in place, never stacked); the result is capped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from .rows import Row

_PATH = re.compile(r"(?<![\w/])(?:~?/|\./|\.\./)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b")
_MAX_ACTIONS = 12
_MAX_ASKS = 5
_MAX_FILES = 12


def fallback_summary(middle: Sequence[Row], *, previous: str | None, reason: str, max_chars: int) -> str:
    """A summary body of ``middle`` with the same sections as a model summary, built without a model."""
    asks = [row.text.strip() for row in middle if row.role == "user" and row.text.strip()]
    sections = {
        "Goal": _quote(asks[0], 300) if asks else "none recorded in the compacted turns",
        "Constraints and preferences": "not captured (automatic notes)",
        "Completed actions": "\n".join(_actions(middle)) or "none recorded",
        "Active state": _last_reply(middle),
        "Decisions": "not captured (automatic notes)",
        "Open questions": "not captured (automatic notes)",
        "Pending user asks": "\n".join(
            ["Asks made in the compacted turns (historical; newer messages win):"]
            + [f"- {_quote(ask, 400)}" for ask in asks[-_MAX_ASKS:]]
        )
        if asks
        else "none",
        "Relevant files": "\n".join(f"- {p}" for p in _paths(middle)) or "none",
        "Remaining work": "unknown — confirm with the user if it matters",
    }
    note = f"(Automatic notes: the summary model was unavailable — {reason}.)"
    body = "\n\n".join([note] + [f"## {name}\n{text}" for name, text in sections.items()])
    if previous:
        body = f"{previous.strip()}\n\n## Since the summary above\n{body}"
    return _fit(body, max_chars)


def _actions(rows: Sequence[Row]) -> list[str]:
    results = {row.record.tool_call_id: row.text for row in rows if row.role == "tool"}
    lines: list[str] = []
    for row in rows:
        for call in row.tool_calls or ():
            args = json.dumps(call.get("arguments", {}), ensure_ascii=False, sort_keys=True)
            result = results.get(str(call.get("id", "")), "")
            first = result.strip().splitlines()[0][:120] if result.strip() else "(no result)"
            lines.append(f"{len(lines) + 1}. {call.get('name', '?')}({args[:120]}) — {first}")
    return lines[-_MAX_ACTIONS:]


def _last_reply(rows: Sequence[Row]) -> str:
    for row in reversed(rows):
        if row.is_visible_reply:
            return f"Last reply in the compacted turns: {_quote(row.text.strip(), 700)}"
    return "unknown"


def _paths(rows: Sequence[Row]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for match in _PATH.findall(row.text):
            seen.setdefault(match, None)
    return list(seen)[:_MAX_FILES]


def _quote(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return f"'{flat[:limit]}{'…' if len(flat) > limit else ''}'"


def _fit(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    marker = "\n…[earlier notes shortened]…\n"
    head = max_chars // 3
    tail = max_chars - head - len(marker)
    return text[:head] + marker + text[-tail:]
