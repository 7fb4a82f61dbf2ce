"""A long scripted conversation that crosses the threshold three times: one conversation, four segments."""

from __future__ import annotations

import itertools
from pathlib import Path

from agent_core.agent import TurnFinished
from agent_core.compression import BANNER, FLUSH_INSTRUCTION, CompressionStatus
from agent_core.llm import ScriptedClient
from agent_core.storage import EndReason

from .harness import ChattyModel, banner_count, compressing_agent, outcomes, summary_step


async def test_three_compressions_make_four_linked_segments_of_one_conversation(home: Path) -> None:
    model = ChattyModel()
    client = ScriptedClient(default=model)
    summariser = ScriptedClient(default=summary_step, name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        conversation = await agent.conversation()
        compressed = []
        for turn in range(80):
            events = await agent.say(conversation, f"message {turn}: " + "tell me more about cats. " * 16)
            final = events[-1]
            assert isinstance(final, TurnFinished)
            done = [o for o in outcomes(events) if o.status is CompressionStatus.COMPRESSED]
            for outcome in done:
                assert final.segment_id == outcome.segment_id, "the turn continues on the new tip"
            compressed += done
            if len(compressed) == 3:
                break
        assert len(compressed) == 3, "the conversation should cross the threshold three times"
        assert turn >= 8, "each compression must buy room for several turns"

        segments = await agent.state.lineage(conversation)
        assert len(segments) == 4
        assert segments[0].parent_session_id is None
        for parent, child in itertools.pairwise(segments):
            assert child.parent_session_id == parent.id
            assert parent.end_reason == EndReason.COMPRESSION
        assert segments[-1].end_reason is None
        assert {s.conversation_id for s in segments} == {conversation}
        for segment in segments:
            assert (await agent.state.resolve_tip(segment.id)).id == segments[-1].id
            assert [s.id for s in await agent.state.lineage(segment.id)] == [s.id for s in segments]
        everything = await agent.state.conversation_messages(conversation)
        assert {m.conversation_id for m in everything} == {conversation}
        assert {m.session_id for m in everything} == {s.id for s in segments}

        # The fact saved by flush k is in child k's frozen prompt, and was not in its parent's.
        for k in (1, 2, 3):
            assert f"Ada's fact number {k}" in (segments[k].system_prompt or "")
            assert f"Ada's fact number {k}" not in (segments[k - 1].system_prompt or "")
        memory = await agent.memory.entries(person_id="ada", target="user")
        assert memory.entries == ("Ada's fact number 1", "Ada's fact number 2", "Ada's fact number 3")

        for index, segment in enumerate(segments[1:], start=1):
            rows = await agent.state.segment_messages(segment.id)
            assert banner_count(rows) == 1, "one summary per segment, updated in place"
            if index == 1:
                assert (rows[0].content or "").startswith("message 0:"), "first compression keeps the head"
                assert (rows[3].content or "").startswith(BANNER)
            else:
                assert (rows[0].content or "").startswith(BANNER), "later compressions have no head"
        # Flush traffic is internal: never stored in the conversation.
        assert all(FLUSH_INSTRUCTION not in (m.content or "") for m in everything)
        assert all(m.tool_call_id is None or not m.tool_call_id.startswith("flush_") for m in everything)
        updates = ["<previous-summary>" in r.messages[0].content for r in summariser.requests]
        assert updates == [False, True, True]
        assert all(r.tools == () for r in summariser.requests)
        assert len(model.flushes) == 3
        assert all({t.name for t in r.tools} == {"memory"} for r in model.flushes)
