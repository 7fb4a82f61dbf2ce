"""Properties of every compression plan on random transcripts: tool calls, failures, notes, recall."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core.compression import (
    BANNER,
    DUPLICATE_OUTPUT,
    CompressionPlan,
    CompressionSettings,
    plan_compression,
)
from agent_core.storage import MessageRecord, NewMessage

from .transcripts import Transcript, build, exchanges

SETTINGS = CompressionSettings(long_tool_output_chars=1_500, min_tail_messages=4)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_pairs_complete(messages: Sequence[NewMessage]) -> None:
    """Every tool_call is answered right after its assistant row; every result answers such a call."""
    open_calls: set[str] = set()
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in open_calls, f"result without its call: {message.tool_call_id}"
            open_calls.discard(str(message.tool_call_id))
            continue
        assert not open_calls, f"tool calls without results: {open_calls}"
        open_calls = {str(call["id"]) for call in message.tool_calls or ()}
    assert not open_calls, f"tool calls without results: {open_calls}"


def last_user(records: Sequence[MessageRecord]) -> MessageRecord | None:
    return next((r for r in reversed(records) if r.role == "user" and r.author == "ada"), None)


def banners(messages: Sequence[Any]) -> int:
    return sum((m.content or "").count(BANNER) for m in messages)


def assert_cuts_on_pair_boundaries(
    records: Sequence[MessageRecord], plan: CompressionPlan, messages: list[NewMessage]
) -> None:
    """Kept rows are a head and a tail of the original, cut between pairs; every other row is summarised."""
    source = [r for r in records if not (r.content or "").startswith(BANNER)]
    stamps = [r.created_at for r in source]
    kept = [m.created_at for m in messages if not (m.content or "").startswith(BANNER)]
    summarised = [row.record.created_at for row in plan.middle]
    assert sorted(kept + summarised) == stamps, "no row may be dropped: each is kept or summarised"
    head = next(
        (i for i, (a, b) in enumerate(zip(stamps, kept, strict=False)) if a != b), min(len(kept), len(stamps))
    )
    tail = kept[head:]
    assert tail == stamps[len(stamps) - len(tail) :], "kept rows must be a head and a tail of the original"
    if tail:
        assert source[len(stamps) - len(tail)].role != "tool", (
            "the tail must not start inside a tool exchange"
        )
    by_stamp = {r.created_at: r for r in source}
    for message in messages:
        original = by_stamp.get(message.created_at or -1)
        if original is None or (message.content or "").startswith(BANNER):
            continue
        assert message.tool_calls == (list(original.tool_calls) if original.tool_calls else None)
        if message.content == DUPLICATE_OUTPUT:
            earlier = messages[: messages.index(message)]
            assert any(m.role == "tool" and m.content == original.content for m in earlier), (
                "a back-reference must point at a copy that is still visible"
            )
        if message.content != original.content:
            assert original.role == "tool", "only tool outputs may be shortened"
            assert message.api_content is None, "a changed row must not replay its old bytes"
        else:
            assert message.api_content == original.api_content


def check(records: Sequence[MessageRecord], plan: CompressionPlan, summary: str) -> None:
    messages = plan.messages(summary)
    assert_pairs_complete(messages)
    assert_cuts_on_pair_boundaries(records, plan, messages)
    assert banners(messages) == 1
    replies = [r for r in records if r.role == "assistant" and (r.content or "").strip()]
    if replies:
        assert any(m.created_at == replies[-1].created_at for m in messages), "last visible reply kept"
    summary_at = next(i for i, m in enumerate(messages) if (m.content or "").startswith(BANNER))
    user_rows = [i for i, m in enumerate(messages) if m.role == "user"]
    assert user_rows, "a user message must survive"
    if user_rows[-1] == summary_at:
        raise AssertionError("the summary is the newest user-role message")
    newest = last_user(records)
    if newest is not None:
        kept = messages[user_rows[-1]]
        assert (kept.content, kept.api_content, kept.author) == (
            newest.content,
            newest.api_content,
            newest.author,
        ), "the newest user message must be kept verbatim (recall bytes included)"
        assert user_rows[-1] > summary_at


@PROPERTY
@given(drawn=exchanges, window=st.integers(min_value=300, max_value=6_000))
def test_a_compression_keeps_pairs_the_newest_ask_and_one_summary(
    drawn: list[dict[str, Any]], window: int
) -> None:
    transcript = build(drawn)
    plan = plan_compression(transcript.records, settings=SETTINGS, context_window=window)
    if plan is None:
        return
    check(transcript.records, plan, "## Goal\nfirst summary")


@PROPERTY
@given(first=exchanges, second=exchanges, window=st.integers(min_value=300, max_value=3_000))
def test_compressing_twice_updates_the_one_summary(
    first: list[dict[str, Any]], second: list[dict[str, Any]], window: int
) -> None:
    original = build(first)
    plan = plan_compression(original.records, settings=SETTINGS, context_window=window)
    if plan is None:
        return
    child = Transcript(session_id="sg_child")
    child.extend(plan.messages("## Goal\nfirst summary"))
    child = build(second, child)
    again = plan_compression(child.records, settings=SETTINGS, context_window=window)
    if again is None:
        return
    assert again.previous_summary == "## Goal\nfirst summary", "the earlier summary is found and updated"
    assert again.selection.head == (), "protect_first_n applies to the first compression only"
    check(child.records, again, "## Goal\nupdated summary")


def test_a_summary_sitting_late_in_the_segment_is_still_found_and_replaced() -> None:
    """Regression for the anchor's §9.1.19: find the summary by its banner, wherever it sits."""
    t = Transcript()
    for n in range(6):
        t.user(f"question {n} " * 20)
        t.reply(f"answer {n} " * 20)
    plan = plan_compression(t.records, settings=SETTINGS, context_window=1_000)
    assert plan is not None
    child = Transcript(session_id="sg_child")
    for n in range(3):  # a few rows somehow stored before the summary row
        child.user(f"early {n}")
        child.reply(f"early answer {n}")
    child.extend(plan.messages("## Goal\nold summary"))
    for n in range(6):
        child.user(f"later {n} " * 20)
        child.reply(f"later answer {n} " * 20)
    again = plan_compression(child.records, settings=SETTINGS, context_window=1_000)
    assert again is not None
    assert again.previous_summary == "## Goal\nold summary"
    messages = again.messages("## Goal\nnew summary")
    assert banners(messages) == 1
    assert "old summary" not in " ".join(m.content or "" for m in messages)
