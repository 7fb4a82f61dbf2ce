"""Chat commands: answered at once (even mid-turn), only for the sender, once per platform event."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from agent_core.llm import LLMRequest, ScriptedClient, ScriptStep, UsageEvent
from agent_core.providers import MemoryManager, MemoryProvider, ProviderContext
from gateway.inbound import NO_COMPRESSION, BuiltinCommands, CommandCall, CommandServices
from gateway.runtime import build_gateway
from gateway.sessions import KeyScope, SessionKey

from ..delivery.recording_adapter import dm
from ..queue.clients import PacedClient
from ..queue.harness import backbone, open_config

COMMANDS = ("help", "new", "stop", "status", "memory", "compress", "link", "whoami")


async def test_help_lists_every_command_from_the_table(home: Path) -> None:
    async with backbone(home) as b:
        await b.gateway.pipeline.handle(dm("/help", event="e1"))
        (text,) = await b.wait_sent(1)
        for name in COMMANDS:
            assert f"/{name}" in text
        assert "/reset" in text
        assert await b.jobs() == []


async def test_a_retried_command_runs_once(home: Path) -> None:
    async with backbone(home) as b:
        first = await b.gateway.pipeline.process(dm("hello", event="e1"))
        await b.wait_sent(1)
        new = dm("/new", event="e2")
        key = SessionKey("test", KeyScope.DM, "dm-ada").to_string()
        outcomes = [await b.gateway.pipeline.process(new)]
        fresh = await b.runtime.storage.agent.live_conversation(key)
        outcomes += [await b.gateway.pipeline.process(new) for _ in range(2)]
        assert [o.reason for o in outcomes] == ["command", "duplicate", "duplicate"]
        await b.wait_sent(2)
        ended = await b.runtime.storage.agent.get_conversation(first.conversation_id or "")
        assert ended is not None and ended.end_reason == "new"
        live = await b.runtime.storage.agent.live_conversation(key)
        # Ended once, one fresh conversation: the retries did not start another.
        assert fresh is not None and live is not None and live.id == fresh.id != ended.id


async def test_new_and_reset_end_the_conversation_with_their_reason(home: Path) -> None:
    async with backbone(home) as b:
        first = await b.gateway.pipeline.process(dm("hello", event="e1"))
        await b.wait_sent(1)
        await b.gateway.pipeline.handle(dm("/reset", event="e2"))
        await b.wait_sent(2)
        second = await b.gateway.pipeline.process(dm("hello again", event="e3"))
        assert await b.wait_sent(3)
        assert first.conversation_id != second.conversation_id
        ended = await b.runtime.storage.agent.get_conversation(first.conversation_id or "")
        assert ended is not None and ended.end_reason == "reset"
        assert b.adapter.texts()[2] == "echo: hello again"  # no history from the old conversation


async def test_status_reports_conversation_tokens_queue_and_model_even_mid_turn(home: Path) -> None:
    gate = asyncio.Event()
    client = PacedClient(gate=gate)
    async with backbone(home, client=client) as b:
        first = await b.gateway.pipeline.process(dm("hello", event="e1"))
        await asyncio.wait_for(client.started.wait(), 5)
        await b.gateway.pipeline.handle(dm("/status", event="e2"))
        (status,) = await b.wait_sent(1)
        assert f"Conversation: {first.conversation_id}" in status
        assert "Segments: 1" in status and "a reply is being written" in status
        gate.set()
        await b.wait_sent(2)
        await b.gateway.pipeline.handle(dm("/status", event="e3"))
        status = (await b.wait_sent(3))[-1]
        assert "10 in, 3 out, 7 cache read" in status and "Queue: idle" in status
        assert "Memory: built-in" in status


async def test_memory_shows_only_the_senders_own_memory(home: Path) -> None:
    async with backbone(home) as b:
        ada = await b.gateway.access.accounts.person_for(dm("x", user="ada", event="x").sender)
        await b.runtime.memory.add(ada, target="user", content="Ada likes tea")
        await b.gateway.pipeline.handle(dm("/memory", user="ada", event="e1"))
        await b.gateway.pipeline.handle(dm("/memory", user="bob", event="e2"))
        await b.wait_sent(2)
        assert "Ada likes tea" in b.adapter.texts("dm-ada")[0]
        assert "Ada likes tea" not in b.adapter.texts("dm-bob")[0]


async def test_whoami_and_link(home: Path) -> None:
    config = open_config(access={"test": {"mode": "open"}, "admins": ["test:root"]})
    async with backbone(home, config=config) as b:
        await b.gateway.pipeline.handle(dm("/whoami", user="root", event="e1"))
        await b.gateway.pipeline.handle(dm("/link", user="ada", event="e2"))
        await b.wait_sent(2)
        whoami = b.adapter.texts("dm-root")[0]
        assert "Account: test:root" in whoami and "Role: admin" in whoami
        assert "link code" in b.adapter.texts("dm-ada")[0]


async def test_compress_says_plainly_when_it_is_not_available(home: Path) -> None:
    async with backbone(home) as b:
        services = CommandServices(
            state=b.runtime.storage.agent, queue=b.gateway.queue, memory=b.runtime.memory, model_name="m"
        )
        table = BuiltinCommands(services).table
        parsed = table.parse("/compress@mnemo_bot")
        assert parsed is not None and parsed[0].name == "compress"
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        await b.wait_sent(1)
        command, name, argument = parsed
        person = await b.gateway.access.accounts.person_for(dm("x", event="x").sender)
        key = SessionKey("test", KeyScope.DM, "dm-ada")
        reply = await command.handler(CommandCall(name, argument, dm("/compress", event="e2"), person, key))
        assert reply == NO_COMPRESSION
        await b.gateway.pipeline.handle(dm("/compress", event="e3"))
        assert len(await b.wait_sent(2)) == 2  # the wired compressor answers with some text


class EndRecordingProvider(MemoryProvider):
    """An external memory provider that only records which conversations it was told have ended."""

    name = "recording"

    def __init__(self) -> None:
        self.ended: list[tuple[str, str, str]] = []

    def unavailable_reason(self) -> str | None:
        return None

    async def prefetch(self, ctx: ProviderContext, query: str) -> str | None:
        return None

    async def on_session_end(self, ctx: ProviderContext) -> None:
        self.ended.append((ctx.person_id, ctx.conversation_id, ctx.platform))


async def test_new_tells_the_memory_provider_that_the_conversation_ended(home: Path) -> None:
    recorder = EndRecordingProvider()
    async with backbone(home) as b, MemoryManager([recorder]) as manager:
        gateway = build_gateway(replace(b.runtime, providers=manager))
        first = await gateway.pipeline.process(dm("hello", event="e1"))
        await b.wait_sent(1)
        await gateway.pipeline.handle(dm("/new", event="e2"))
        await b.wait_sent(2)
        assert await manager.drain(5)
        assert [(conversation, platform) for _, conversation, platform in recorder.ended] == [
            (first.conversation_id, "test")
        ]


async def test_status_shows_the_sender_their_own_usage_today_and_this_month(home: Path) -> None:
    def priced(request: LLMRequest) -> ScriptStep:
        return ScriptStep.reply("ok", usage=UsageEvent(input_tokens=1_000_000, output_tokens=100_000))

    config = open_config(usage={"prices": {"house-model": {"input": 2, "output": 10}}})
    client = ScriptedClient(default=priced, name="house-model")
    async with backbone(home, client=client, config=config) as b:
        await b.gateway.pipeline.handle(dm("/status", user="ada", event="e0"))
        await b.wait_sent(1)
        assert "Your usage today: nothing yet" in b.adapter.texts("dm-ada")[0]
        await b.gateway.pipeline.process(dm("hello", user="ada", event="e1"))
        await b.wait_sent(2)
        await b.gateway.pipeline.handle(dm("/status", user="ada", event="e2"))
        await b.gateway.pipeline.handle(dm("/status", user="bob", event="e3"))
        await b.wait_sent(4)
        ada = b.adapter.texts("dm-ada")[-1]
        assert "Your usage today: $3.0000, 1,100,000 tokens, 1 model call" in ada
        assert "Your usage this month: $3.0000, 1,100,000 tokens, 1 model call" in ada
        assert "Your usage today: nothing yet" in b.adapter.texts("dm-bob")[0]
