"""The compression chain on every backend: an atomic switch that refuses to fork (also between processes),
carry-over of what the plan did not see, one tip reachable from any segment, and root-to-tip lineage."""

from __future__ import annotations

import asyncio
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

import pytest

from agent_core.storage import (
    AgentStorage,
    AlreadyCompressed,
    Compressed,
    EndReason,
    NewMessage,
    NewSegment,
    Principal,
    UnknownSegmentError,
)

from .backends import BackendUnderTest, open_storage
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_DEADLINE_S = 60.0
BOB = Principal(
    person_id="p-bob", platform="slack", user_id="U1", chat_id="C1", chat_type="group", thread_id="t9"
)


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


async def test_the_switch_ends_the_parent_starts_the_child_with_its_messages_and_moves_the_tip(
    storage: Storage,
) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("slack:C1:t9", BOB, NewSegment("prompt v1", "m1"))
    root = conversation.tip_session_id
    await store.append_message(root, NewMessage("user", "long history"))
    result = await store.compress(
        root,
        NewSegment("prompt v2", "m1"),
        [NewMessage("user", "[handoff summary]"), NewMessage("user", "last ask")],
    )
    assert isinstance(result, Compressed)
    parent = await store.get_segment(root)
    child_messages = await store.segment_messages(result.child.id)
    moved = await store.get_conversation(conversation.id)
    assert parent is not None and parent.end_reason == "compression" and parent.ended_at is not None
    assert result.child.parent_session_id == root and result.child.system_prompt == "prompt v2"
    assert result.child.principal == BOB and result.child.session_key == "slack:C1:t9"
    assert [m.content for m in child_messages] == ["[handoff summary]", "last ask"]
    assert list(result.message_ids) == [m.id for m in child_messages]
    assert moved is not None and moved.id == conversation.id and moved.tip_session_id == result.child.id
    assert [m.content for m in await store.segment_messages(root)] == ["long history"], "the parent stays"


async def test_what_a_writer_adds_around_a_switch_it_did_not_see_lands_in_the_tip_in_order(
    storage: Storage,
) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", BOB)
    root = conversation.tip_session_id
    seen = await store.append_messages(root, [NewMessage("user", "old ask"), NewMessage("assistant", "ok")])
    await store.append_message(root, NewMessage("user", "sent while summarising"))  # after the plan read
    result = await store.compress(root, NewSegment("v2"), [NewMessage("user", "[summary]")], seen=seen)
    assert isinstance(result, Compressed)
    # A turn that started on the parent keeps writing to it; its messages belong to the new tip.
    await store.append_message(root, NewMessage("assistant", "late reply"))
    tip = [m.content for m in await store.segment_messages(result.child.id)]
    parent = [m.content for m in await store.segment_messages(root)]
    assert tip == ["[summary]", "sent while summarising", "late reply"]
    assert parent == ["old ask", "ok", "sent while summarising"]
    assert len(result.message_ids) == 2, "the summary and the carried-over message"


async def test_carry_over_compares_ids_with_what_was_seen_not_with_the_largest_one(
    storage: Storage,
) -> None:
    """The rule a concurrent backend relies on: a message missing from ``seen`` is carried over even when
    the plan saw messages with larger ids (ids need not be visible in commit order)."""
    store = agent(storage)
    conversation = await store.ensure_conversation("k", BOB)
    root = conversation.tip_session_id
    first, middle, last = await store.append_messages(
        root, [NewMessage("user", "one"), NewMessage("user", "two"), NewMessage("user", "three")]
    )
    result = await store.compress(root, NewSegment(), [NewMessage("user", "[summary]")], seen={first, last})
    assert isinstance(result, Compressed)
    assert [m.content for m in await store.segment_messages(result.child.id)] == ["[summary]", "two"]
    assert middle not in result.message_ids


async def test_without_seen_nothing_is_carried_over(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", BOB)
    await store.append_message(conversation.tip_session_id, NewMessage("user", "replaced wholesale"))
    result = await store.compress(conversation.tip_session_id, NewSegment(), [NewMessage("user", "[s]")])
    assert isinstance(result, Compressed)
    assert [m.content for m in await store.segment_messages(result.child.id)] == ["[s]"]


async def test_compressing_an_already_compressed_segment_is_refused_without_a_fork(
    storage: Storage,
) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", BOB)
    root = conversation.tip_session_id
    first = await store.compress(root, NewSegment("v2"), [NewMessage("user", "summary A")])
    second = await store.compress(root, NewSegment("v2"), [NewMessage("user", "summary B")])
    lineage = await store.lineage(conversation.id)
    everything = await store.conversation_messages(conversation.id)
    assert isinstance(first, Compressed)
    assert second == AlreadyCompressed(root, "compression", first.child.id)
    assert [s.id for s in lineage] == [root, first.child.id]
    assert [s.id for s in await store.segments(conversation.id)] == [root, first.child.id]
    assert "summary B" not in [m.content for m in everything]


async def test_compressing_a_segment_of_an_ended_conversation_is_refused(storage: Storage) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", BOB)
    await store.end_conversation(conversation.id, EndReason.RESET)
    result = await store.compress(conversation.tip_session_id, NewSegment(), [])
    assert isinstance(result, AlreadyCompressed) and result.parent_end_reason == "reset"


async def test_compressing_an_unknown_segment_is_a_clear_error(storage: Storage) -> None:
    with pytest.raises(UnknownSegmentError):
        await agent(storage).compress("sg_missing", NewSegment(), [])


async def test_the_tip_resolves_from_any_segment_or_the_conversation_and_lineage_runs_root_to_tip(
    storage: Storage,
) -> None:
    store = agent(storage)
    conversation = await store.ensure_conversation("k", BOB)
    chain = [conversation.tip_session_id]
    for generation in range(4):
        await store.append_message(chain[-1], NewMessage("user", f"in generation {generation}"))
        result = await store.compress(chain[-1], NewSegment(f"v{generation}"), [])
        assert isinstance(result, Compressed)
        chain.append(result.child.id)
    tips = {(await store.resolve_tip(any_id)).id for any_id in [*chain, conversation.id]}
    lineages = [
        [s.id for s in await store.lineage(any_id)] for any_id in (chain[0], chain[2], conversation.id)
    ]
    histories = {(await store.tip_history(any_id)).segment.id for any_id in (chain[0], conversation.id)}
    with pytest.raises(UnknownSegmentError):
        await store.resolve_tip("sg_missing")
    with pytest.raises(UnknownSegmentError):
        await store.tip_history("sg_missing")
    assert tips == histories == {chain[-1]}
    assert lineages == [chain, chain, chain]
    assert [s.id for s in await store.segments(conversation.id)] == chain


def compress_together(spec: str, parent: str, name: str, barrier: Barrier, out: Queue[str]) -> None:
    """Multiprocessing target: compress ``parent`` at the same moment as the other process; put the result."""

    async def run() -> str:
        async with open_storage(spec) as storage:
            barrier.wait(timeout=_DEADLINE_S)
            result = await agent(storage).compress(
                parent, NewSegment(f"prompt of {name}"), [NewMessage("user", f"summary by {name}")]
            )
        if isinstance(result, Compressed):
            return f"compressed {result.child.id}"
        return f"refused {result.tip_session_id}"

    out.put(asyncio.run(run()))


async def _seeded(backend: BackendUnderTest) -> tuple[str, str]:
    async with backend.open() as storage:
        conversation = await agent(storage).ensure_conversation("race", BOB)
        await agent(storage).append_message(conversation.tip_session_id, NewMessage("user", "history"))
        return conversation.id, conversation.tip_session_id


async def _chain_of(backend: BackendUnderTest, conversation_id: str) -> tuple[list[str], list[str], str]:
    async with backend.open() as storage:
        store = agent(storage)
        segments = [s.id for s in await store.segments(conversation_id)]
        lineage = [s.id for s in await store.lineage(conversation_id)]
        tip = await store.tip_history(conversation_id)
        return segments, lineage, " ".join(m.content or "" for m in tip.messages)


def test_two_processes_compressing_one_segment_leave_one_child_and_the_loser_learns_the_tip(
    backend: BackendUnderTest,
) -> None:
    conversation_id, root = asyncio.run(_seeded(backend))
    results = sorted(run_together(compress_together, [(backend.spec, root, f"p{n}") for n in range(2)]))
    segments, lineage, tip_text = asyncio.run(_chain_of(backend, conversation_id))
    assert [r.split()[0] for r in results] == ["compressed", "refused"]
    winner = results[0].split()[1]
    assert results[1].split()[1] == winner, "the loser is told the winner's tip"
    assert segments == lineage == [root, winner], "exactly one child, one tip"
    assert tip_text.count("summary by") == 1
