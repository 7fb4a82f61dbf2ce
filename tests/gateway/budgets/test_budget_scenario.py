"""A person over budget, through the real gateway backbone: their message gets ONE notice saying which
limit and when it resets, the model is never called, later messages in the period are refused silently,
and commands (/status, /help) keep answering; another person still gets answers."""

from __future__ import annotations

from pathlib import Path

from agent_core.llm import LLMRequest
from agent_core.llm.events import UsageEvent
from agent_core.llm.scripted import ScriptedClient, ScriptStep

from ..delivery.recording_adapter import dm
from ..queue.harness import backbone, open_config, pending_user_texts


def costly_echo(request: LLMRequest) -> ScriptStep:
    """Answers like the harness's echo, reporting 120 tokens for the call."""
    text = "echo: " + " | ".join(pending_user_texts(request))
    return ScriptStep.reply(text, usage=UsageEvent(input_tokens=80, output_tokens=40))


async def test_over_budget_one_notice_no_model_call_and_commands_still_work(home: Path) -> None:
    client = ScriptedClient(default=costly_echo)
    config = open_config(budgets={"person": {"day_tokens": 100}})
    async with backbone(home, client=client, config=config) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        assert await b.wait_sent(1) == ["echo: hello"]
        assert len(client.requests) == 1  # 120 tokens spent: the daily 100 are used up

        await b.gateway.pipeline.handle(dm("are you there?", event="e2"))
        (notice,) = (await b.wait_sent(2))[1:]
        assert "You have reached your daily budget (100 tokens)" in notice
        assert "resets on" in notice and "UTC" in notice
        await b.gateway.pipeline.handle(dm("hello??", event="e3"))
        await b.wait_for(lambda: b.pool is not None and b.pool.in_flight == 0)
        await b.gateway.pipeline.handle(dm("/status", event="e4"))
        await b.gateway.pipeline.handle(dm("/help", event="e5"))
        sent = await b.wait_sent(4)
        assert len(client.requests) == 1  # no model call for e2 or e3
        assert sent[2:] and all("budget" not in text for text in sent[2:])  # e3 got no second notice
        assert len(sent) == 4 and "/status" in sent[3]  # /status answered, then /help listing it
        errors = [job.error for job in await b.jobs()]
        assert errors == [None, "budget:person", "budget:person"]

        await b.gateway.pipeline.handle(dm("hi", user="bob", event="e6"))
        await b.wait_for(lambda: "echo: hi" in b.adapter.texts("dm-bob"))
        assert len(client.requests) == 2
