"""Two OS processes compress one conversation at the same moment: one chain, one child, one tip.

Each process runs a real turn (flush, summary, switch, reply) through the real Compressor against the
same state.db; both summaries are released together by a barrier, so both reach ``StateStore.compress``
for the same parent. The loser must continue its turn on the winner's tip.
"""

from __future__ import annotations

import asyncio
import json
from multiprocessing.synchronize import Barrier
from pathlib import Path

from agent_core.agent import TurnFinished
from agent_core.compression import BANNER, CompressionOutcome
from agent_core.llm import LLMRequest, ScriptedClient, ScriptStep
from agent_core.storage import NewMessage
from gateway.storage.sqlite import open_state_store
from tests.agent_core.compression.harness import ChattyModel, compressing_agent, summary_step
from tests.spawned import DEADLINE_S, SPAWN, run_spawned

_DEADLINE_S = DEADLINE_S


def race_in_process(home: str, conversation_id: str, name: str, barrier: Barrier, out: str) -> None:
    """Multiprocessing target: run one turn that compresses; write what happened to ``out`` as JSON."""
    result = asyncio.run(_race(Path(home), conversation_id, name, barrier))
    Path(out).write_text(json.dumps(result))


async def _race(home: Path, conversation_id: str, name: str, barrier: Barrier) -> dict[str, object]:
    def summarise_together(request: LLMRequest) -> ScriptStep:
        barrier.wait(timeout=_DEADLINE_S)  # both processes hold a finished plan for the same parent
        return summary_step(request)

    client = ScriptedClient(default=ChattyModel(reply=f"reply from {name}"))
    summariser = ScriptedClient(default=summarise_together, name="aux")
    async with compressing_agent(home, client, summariser=summariser) as agent:
        events = [e async for e in agent.runner.run(agent.scope(conversation_id))]
    final = events[-1]
    assert isinstance(final, TurnFinished)
    statuses = [e.status.value for e in events if isinstance(e, CompressionOutcome)]
    return {"statuses": statuses, "segment": final.segment_id, "text": final.text}


async def _long_conversation(home: Path) -> str:
    async with compressing_agent(home, ScriptedClient()) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8)
        tip = await agent.state.resolve_tip(conversation)
        await agent.state.append_message(tip.id, NewMessage(role="user", content="race me", author="ada"))
        return conversation


async def _chain(home: Path, conversation_id: str) -> tuple[list[str], list[str], list[str], str]:
    async with open_state_store(home) as state:
        lineage = await state.lineage(conversation_id)
        root = lineage[0].id
        children = [s.id for s in await state.segments(conversation_id) if s.parent_session_id == root]
        tip = await state.resolve_tip(conversation_id)
        contents = [m.content or "" for m in await state.segment_messages(tip.id)]
        return [s.id for s in lineage], children, contents, tip.id


def test_two_processes_compressing_one_conversation_leave_one_chain(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    conversation = asyncio.run(_long_conversation(home))
    barrier = SPAWN.Barrier(2)
    outs = [tmp_path / f"out{i}.json" for i in range(2)]
    processes = [
        SPAWN.Process(target=race_in_process, args=(str(home), conversation, f"p{i}", barrier, str(outs[i])))
        for i in range(2)
    ]
    run_spawned(processes, _DEADLINE_S)

    results = [json.loads(out.read_text()) for out in outs]
    assert sorted(r["statuses"][0] for r in results) == ["compressed", "lost_race"]
    lineage, children, contents, tip = asyncio.run(_chain(home, conversation))
    assert len(lineage) == 2 and children == [lineage[1]] and tip == lineage[1], "one child, one tip"
    assert {r["segment"] for r in results} == {tip}, "the loser continued on the winner's tip"
    assert sum(c.count(BANNER) for c in contents) == 1
    assert contents.count("race me") == 1
    assert sorted(c for c in contents if c.startswith("reply from")) == ["reply from p0", "reply from p1"]
