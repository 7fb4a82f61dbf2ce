"""What survives verbatim: a head (first compression only), a tail by token budget, and the middle between.

Invariants: the tail always holds the newest user message (and the user messages sent right before it,
answered together) and the newest visible assistant reply; no cut ever separates an assistant tool-call
row from its tool results; any earlier handoff summary is taken out of the flow wherever it sits (found by
banner, not by position) so it can be updated in place; a plan with nothing in the middle is no plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .rows import Row
from .summary import is_summary, unwrap


@dataclass(frozen=True, slots=True)
class Selection:
    """The three parts of a segment, plus the text of the summary being updated (if any)."""

    head: tuple[Row, ...]
    middle: tuple[Row, ...]
    tail: tuple[Row, ...]
    previous_summary: str | None
    active: frozenset[int]
    """Record ids of the active exchange (from the newest user asks on): never shortened."""


def split_summaries(rows: Sequence[Row]) -> tuple[list[Row], str | None]:
    """The rows without handoff summaries, and the summaries' bodies joined (normally there is one)."""
    bodies = [unwrap(row.text) for row in rows if is_summary(row.record)]
    rest = [row for row in rows if not is_summary(row.record)]
    return rest, ("\n\n".join(bodies) if bodies else None)


def active_start(rows: Sequence[Row]) -> int:
    """Index of the first user message of the newest run of user messages (len(rows) if there is none)."""
    last = next((i for i in range(len(rows) - 1, -1, -1) if rows[i].role == "user"), None)
    if last is None:
        return len(rows)
    start = last
    while start > 0 and rows[start - 1].role == "user":
        start -= 1
    return start


def select(
    rows: Sequence[Row],
    *,
    previous_summary: str | None,
    protect_first_n: int,
    tail_budget: int,
    min_tail: int,
) -> Selection | None:
    """Split summary-free ``rows`` into head, middle and tail; None when there is nothing to compress."""
    n = len(rows)
    start = active_start(rows)
    head_end = 0 if previous_summary is not None else min(protect_first_n, n)
    while head_end < n and rows[head_end].role == "tool":
        head_end += 1
    head_end = min(head_end, start)

    cut, used = n, 0
    while cut > head_end:
        cost = rows[cut - 1].tokens()
        if n - cut >= min_tail and used + cost > tail_budget:
            break
        used += cost
        cut -= 1
    cut = min(cut, start)
    last_reply = next((i for i in range(n - 1, -1, -1) if rows[i].is_visible_reply), None)
    if last_reply is not None and last_reply >= head_end:
        cut = min(cut, last_reply)
    while head_end < cut < n and rows[cut].role == "tool":
        cut -= 1
    cut = max(cut, head_end)
    middle = tuple(rows[head_end:cut])
    if not middle:
        return None
    return Selection(
        head=tuple(rows[:head_end]),
        middle=middle,
        tail=tuple(rows[cut:]),
        previous_summary=previous_summary,
        active=frozenset(row.record.id for row in rows[start:]),
    )


def repair_pairs(rows: Sequence[Row]) -> list[Row]:
    """Drop tool results without their call and strip calls without their result (damaged history only)."""
    out: list[Row] = []
    issuer: int | None = None
    issued: set[str] = set()
    answered: set[str] = set()

    def close() -> None:
        if issuer is None or issued <= answered:
            return
        row = out[issuer]
        kept = tuple(c for c in row.tool_calls or () if str(c.get("id", "")) in answered)
        out[issuer] = row.with_calls(kept or None)

    for row in rows:
        if row.role == "tool":
            call_id = row.record.tool_call_id or ""
            if call_id in issued and call_id not in answered:
                answered.add(call_id)
                out.append(row)
            continue
        close()
        issuer, issued, answered = None, set(), set()
        if row.role == "assistant" and row.call_ids:
            issuer, issued = len(out), set(row.call_ids)
        out.append(row)
    close()
    # An assistant step left with neither text nor calls carries nothing; providers reject it as empty.
    return [row for row in out if not (row.changed and not row.text.strip() and not row.tool_calls)]
