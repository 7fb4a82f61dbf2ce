"""The compression chain: an atomic switch that refuses to fork, tip resolution and root-to-tip lineage."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.storage.sqlite import (
    AlreadyCompressed,
    Compressed,
    EndReason,
    NewMessage,
    NewSegment,
    Principal,
    StateStore,
    UnknownSegmentError,
)

BOB = Principal(
    person_id="p-bob", platform="slack", user_id="U1", chat_id="C1", chat_type="group", thread_id="t9"
)


async def test_compression_switch_ends_parent_starts_child_with_messages_and_moves_tip(
    tmp_path: Path,
) -> None:
    async with StateStore(tmp_path) as store:
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


async def test_what_a_writer_adds_around_a_switch_it_did_not_see_lands_in_the_tip_in_order(
    tmp_path: Path,
) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", BOB)
        root = conversation.tip_session_id
        (seen,) = [await store.append_message(root, NewMessage("user", "old ask"))]
        await store.append_message(root, NewMessage("user", "sent while summarising"))  # after the plan read
        result = await store.compress(
            root, NewSegment("v2"), [NewMessage("user", "[summary]")], read_up_to=seen
        )
        assert isinstance(result, Compressed)
        # A turn that started on the parent keeps writing to it; its messages belong to the new tip.
        await store.append_message(root, NewMessage("assistant", "late reply"))
        tip = [m.content for m in await store.segment_messages(result.child.id)]
        parent = [m.content for m in await store.segment_messages(root)]
    assert tip == ["[summary]", "sent while summarising", "late reply"]
    assert parent == ["old ask", "sent while summarising"]


async def test_compressing_an_already_compressed_segment_is_refused_without_a_fork(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", BOB)
        root = conversation.tip_session_id
        first = await store.compress(root, NewSegment("v2"), [NewMessage("user", "summary A")])
        second = await store.compress(root, NewSegment("v2"), [NewMessage("user", "summary B")])
        lineage = await store.lineage(conversation.id)
        everything = await store.conversation_messages(conversation.id)
    assert isinstance(first, Compressed)
    assert second == AlreadyCompressed(root, "compression", first.child.id)
    assert [s.id for s in lineage] == [root, first.child.id]
    assert "summary B" not in [m.content for m in everything]


async def test_compressing_a_segment_of_an_ended_conversation_is_refused(tmp_path: Path) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", BOB)
        await store.end_conversation(conversation.id, EndReason.RESET)
        result = await store.compress(conversation.tip_session_id, NewSegment(), [])
    assert isinstance(result, AlreadyCompressed) and result.parent_end_reason == "reset"


async def test_tip_resolves_from_any_segment_or_the_conversation_and_lineage_runs_root_to_tip(
    tmp_path: Path,
) -> None:
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("k", BOB)
        chain = [conversation.tip_session_id]
        for generation in range(4):
            result = await store.compress(chain[-1], NewSegment(f"v{generation}"), [])
            assert isinstance(result, Compressed)
            chain.append(result.child.id)
        tips = {(await store.resolve_tip(any_id)).id for any_id in [*chain, conversation.id]}
        lineages = [
            [s.id for s in await store.lineage(any_id)] for any_id in (chain[0], chain[2], conversation.id)
        ]
        with pytest.raises(UnknownSegmentError):
            await store.resolve_tip("sg_missing")
    assert tips == {chain[-1]}
    assert lineages == [chain, chain, chain]
