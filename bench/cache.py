"""``mnemogate bench cache``: how much of each prompt the provider's prefix cache serves.

A T-turn conversation (with tool calls and one memory write) runs through the real Anthropic client
against the loopback fake, which models Anthropic's prefix caching: a prefix is reused only when the
request's bytes up to a breakpoint match an earlier request's. Reports cache-read input tokens over all
input tokens, and whether every call of the conversation carried the same system prompt.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pydantic import SecretStr

from agent_core.actor import Actor
from agent_core.llm import ModelSettings
from agent_core.llm.fakes import FakeAnthropicServer, FakeReply
from agent_core.storage import NewMessage, Principal
from gateway.config import Home, Settings
from gateway.runtime import open_runtime

_PERSON = "bench"


def _script(turns: int) -> list[FakeReply]:
    """Replies for ``turns`` turns: a memory write in turn 3, a skills lookup every 7th turn."""
    replies: list[FakeReply] = []
    for turn in range(turns):
        if turn == 2:
            replies.append(
                FakeReply.call("memory", {"action": "add", "target": "user", "content": "Bench fact"})
            )
        elif turn % 7 == 6:
            replies.append(FakeReply.call("skills_list", {}))
        replies.append(FakeReply.say(f"Reply {turn}: " + "a considered answer " * 12))
    return replies


async def _run(home: Path, turns: int) -> dict[str, float | int | bool]:
    async with FakeAnthropicServer(default=FakeReply.say("ok")) as fake:
        fake.script(*_script(turns))
        model = ModelSettings(provider="anthropic", model="claude-bench", base_url=fake.base_url)
        settings = Settings(model=model, anthropic_api_key=SecretStr("sk-ant-bench"))
        async with open_runtime(Home(home), settings) as runtime:
            conversation = await runtime.storage.agent.ensure_conversation(
                "bench:dm:cache", Principal(person_id=_PERSON, platform="bench")
            )
            scope = Actor(_PERSON, conversation_id=conversation.id, platform="bench")
            for turn in range(turns):
                tip = await runtime.storage.agent.resolve_tip(conversation.id)
                text = f"Turn {turn}: tell me more about topic {turn % 5}, with some detail please."
                await runtime.storage.agent.append_message(tip.id, NewMessage(role="user", content=text))
                async for _ in runtime.agent.run(scope):
                    pass
            tip = await runtime.storage.agent.resolve_tip(conversation.id)
    systems = {json.dumps(request.body.get("system"), sort_keys=True) for request in fake.requests}
    usage = tip.usage
    total_input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "turns": turns,
        "model_calls": len(fake.requests),
        "cache_read_ratio": round(usage.cache_read_tokens / total_input, 4) if total_input else 0.0,
        "system_prompt_stable": len(systems) == 1,
        "input_tokens": usage.input_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }


def run(home: Path, turns: int) -> dict[str, float | int | bool]:
    """Run the benchmark in ``home`` (a scratch directory)."""
    return asyncio.run(_run(home, turns))
