"""A step's rows and its model call's usage on every backend: one append stores both, all or nothing, and
the usage stays on the segment the call ran on even when the rows land in a newer tip; each call is logged
with its model, kind, priced cost (NULL: unknown) and the person and platform of its conversation, and the
usage port sums the log by person, platform, model, kind and day."""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import pytest

from agent_core.storage import AgentStorage, ModelCall, NewMessage, Principal, TokenUsage, UnknownSegmentError
from gateway.storage.usage_reads import UsageGroup, UsageLine, UsageQuery

if TYPE_CHECKING:
    from gateway.storage import Storage

ALICE = Principal(person_id="p-alice", platform="telegram", user_id="42", chat_id="42", chat_type="dm")


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def test_one_append_stores_the_step_and_adds_its_usage(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", ALICE)
    tip = conversation.tip_session_id
    await store.add_usage(tip, ModelCall(10, 1))
    usage = ModelCall(100, 20, 80, 5, 0.5)
    (reply,) = await store.append_messages(tip, [NewMessage("assistant", "ok")], usage)
    await store.append_messages(tip, [NewMessage("user", "thanks")])  # no usage: counters unchanged
    segment = await store.get_segment(tip)
    assert segment is not None and segment.usage == TokenUsage(110, 21, 80, 5, 0.5)
    ids = [m.id for m in await store.segment_messages(tip)]
    assert len(ids) == 2 and ids[0] == reply


async def test_an_append_to_an_unknown_segment_adds_no_usage_and_no_rows(storage: Storage) -> None:
    store = agent(storage)
    with pytest.raises(UnknownSegmentError):
        await store.append_messages("sg_missing", [NewMessage("assistant", "ok")], ModelCall(1))


BOB = Principal(person_id="p-bob", platform="slack", user_id="U1", chat_id="D1", chat_type="dm")


async def test_each_call_is_logged_with_its_model_kind_cost_and_who_caused_it(storage: Storage) -> None:
    store = agent(storage)
    alice = (await store.ensure_conversation("k-alice", ALICE)).tip_session_id
    bob = (await store.ensure_conversation("k-bob", BOB)).tip_session_id
    turn = ModelCall(100, 20, 80, 5, 0.25, model="claude-sonnet-4-5")
    await store.append_messages(alice, [NewMessage("assistant", "ok")], turn)
    await store.add_usage(
        alice, ModelCall(40, 10, cost_usd=0.125, model="claude-haiku-4-5", kind="compression")
    )
    await store.add_usage(bob, ModelCall(7, 3, model="my-local-llm", kind="flush"))  # no price: cost unknown
    usage = storage.usage

    by_person = await usage.usage_report(UsageQuery(since=0, group=UsageGroup.PERSON))
    assert by_person.total == UsageLine(None, 3, 1, 147, 33, 80, 5, 0.375)
    assert by_person.lines == (
        UsageLine("p-alice", 2, 0, 140, 30, 80, 5, 0.375),
        UsageLine("p-bob", 1, 1, 7, 3, 0, 0, 0.0),
    )
    by_platform = await usage.usage_report(UsageQuery(since=0, group=UsageGroup.PLATFORM))
    assert [(line.key, line.calls) for line in by_platform.lines] == [("telegram", 2), ("slack", 1)]
    by_model = await usage.usage_report(UsageQuery(since=0, group=UsageGroup.MODEL))
    assert [(line.key, line.cost_usd, line.unpriced_calls) for line in by_model.lines] == [
        ("claude-sonnet-4-5", 0.25, 0),
        ("claude-haiku-4-5", 0.125, 0),
        ("my-local-llm", 0.0, 1),
    ]
    by_kind = await usage.usage_report(UsageQuery(since=0, group=UsageGroup.KIND))
    assert {line.key: line.calls for line in by_kind.lines} == {"turn": 1, "compression": 1, "flush": 1}
    bobs = await usage.usage_report(UsageQuery(since=0, person_id="p-bob"))
    assert bobs.total == UsageLine(None, 1, 1, 7, 3, 0, 0, 0.0) and bobs.lines == ()
    # The segment's counters add only known costs; the log keeps the unknown one unknown.
    segment = await store.get_segment(bob)
    assert segment is not None and segment.usage == TokenUsage(7, 3, 0, 0, 0.0)


async def test_a_call_that_spent_nothing_is_not_logged(storage: Storage) -> None:
    store = agent(storage)
    tip = (await store.ensure_conversation("k", ALICE)).tip_session_id
    await store.append_messages(tip, [NewMessage("assistant", "ok")], ModelCall(model="gpt-4o"))
    await store.add_usage(tip, ModelCall(model="gpt-4o"))
    report = await storage.usage.usage_report(UsageQuery(since=0))
    assert report.total == UsageLine()


async def test_usage_by_day_counts_calendar_days_of_the_given_zone(storage: Storage) -> None:
    store = agent(storage)
    tip = (await store.ensure_conversation("k", ALICE)).tip_session_id
    await store.add_usage(tip, ModelCall(10, 1, cost_usd=0.01, model="gpt-4o"))
    now = time.time()
    for tz in ("UTC", "Pacific/Kiritimati", "America/Los_Angeles"):
        report = await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.DAY, timezone=tz))
        today = datetime.fromtimestamp(now, ZoneInfo(tz)).date().isoformat()
        assert [line.key for line in report.lines] == [today]
    in_range = await storage.usage.usage_report(UsageQuery(since=now + 60, group=UsageGroup.DAY))
    assert in_range.total == UsageLine() and in_range.lines == ()
    with pytest.raises(ValueError, match="time zone"):
        await storage.usage.usage_report(UsageQuery(since=0, group=UsageGroup.DAY, timezone="Mars/Olympus"))


async def test_usage_per_platform_and_model_sums_every_call_ever_logged(storage: Storage) -> None:
    store = agent(storage)
    alice = (await store.ensure_conversation("k-alice", ALICE)).tip_session_id
    bob = (await store.ensure_conversation("k-bob", BOB)).tip_session_id
    await store.add_usage(alice, ModelCall(10, 1, 5, 0, 0.5, model="gpt-4o"))
    await store.add_usage(alice, ModelCall(20, 2, cost_usd=0.25, model="gpt-4o", kind="flush"))
    await store.add_usage(bob, ModelCall(7, 3, model="my-llama"))
    cells = await storage.usage.usage_by_platform_and_model()
    assert [(c.platform, c.model, c.line) for c in cells] == [
        ("slack", "my-llama", UsageLine(None, 1, 1, 7, 3, 0, 0, 0.0)),
        ("telegram", "gpt-4o", UsageLine(None, 2, 0, 30, 3, 5, 0, 0.75)),
    ]


async def test_usage_per_platform_and_model_of_a_time_range(storage: Storage) -> None:
    store = agent(storage)
    alice = (await store.ensure_conversation("k-alice", ALICE)).tip_session_id
    await store.add_usage(alice, ModelCall(10, 1, cost_usd=0.5, model="gpt-4o"))
    between = time.time()
    await store.add_usage(alice, ModelCall(20, 2, cost_usd=0.25, model="gpt-4o"))
    before = await storage.usage.usage_by_platform_and_model(until=between)
    after = await storage.usage.usage_by_platform_and_model(since=between)
    assert [(c.platform, c.model, c.line.input_tokens) for c in before] == [("telegram", "gpt-4o", 10)]
    assert [(c.platform, c.model, c.line.input_tokens) for c in after] == [("telegram", "gpt-4o", 20)]
    assert await storage.usage.usage_by_platform_and_model(since=between, until=between) == ()
