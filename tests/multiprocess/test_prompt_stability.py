"""The frozen system prompt across restarts and processes, through the real Anthropic SDK.

Two separate ``mnemogate chat`` processes (the second after the first has exited, continuing the same
conversation) talk to a fake Anthropic server on 127.0.0.1; every request of the 30-turn conversation
must carry the same system prompt bytes, and a memory written in turn 3 must not change them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from agent_core.llm.fakes import FakeAnthropicServer, FakeReply


async def _chat(home: Path, lines: list[str], *extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["ANTHROPIC_API_KEY"] = "sk-ant-test-key"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway.cli",
        "chat",
        "--home",
        str(home),
        *extra,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate("\n".join(lines).encode() + b"\n"), timeout=120)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_thirty_turns_over_two_processes_send_one_system_prompt(home: Path) -> None:
    async with FakeAnthropicServer(default=FakeReply.say("noted")) as fake:
        config = f"model:\n  provider: anthropic\n  model: claude-test\n  base_url: {fake.base_url}\n"
        (home / "config.yaml").write_text(config, encoding="utf-8")
        fake.script(
            FakeReply.say("hi"),
            FakeReply.say("hello again"),
            FakeReply.call("memory", {"action": "add", "target": "user", "content": "Rows on Sundays"}),
        )
        first = await _chat(home, [f"message {n}" for n in range(15)])
        assert first.count("noted") >= 12
        await _chat(home, [f"message {n}" for n in range(15, 30)], "--continue")

        bodies = [request.body for request in fake.requests]
        user_turns = [b for b in bodies if _last_role(b) == "user" and not _is_tool_result(b)]
        assert len(user_turns) == 30
        systems = {json.dumps(b["system"], sort_keys=True) for b in bodies}
        assert len(systems) == 1, "the system prompt changed within the conversation"
        assert "Rows on Sundays" not in systems.pop()
        tool_results = [b for b in bodies if _is_tool_result(b)]
        assert tool_results and '\\"success\\": true' in json.dumps(tool_results[0]["messages"][-1])

        # A new conversation is a new segment: its prompt is rebuilt from disk and shows the memory.
        await _chat(home, ["new topic"])
        assert "Rows on Sundays" in json.dumps(fake.requests[-1].body["system"])


def _last_role(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return str(messages[-1]["role"])


def _is_tool_result(body: dict[str, object]) -> bool:
    messages = body["messages"]
    assert isinstance(messages, list)
    content = messages[-1]["content"]
    return isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)
