"""A person over budget, through the real gateway backbone: their message gets ONE notice saying which
limit and when it resets, the model is never called, later messages in the period are refused silently,
and commands (/status, /help) keep answering; another person still gets answers."""

from __future__ import annotations

from pathlib import Path

import httpx
from pydantic import SecretStr

from agent_core.llm import LLMRequest
from agent_core.llm.events import UsageEvent
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.budgets import BudgetPolicy
from gateway.config import HttpSettings
from gateway.http import AdminBackend, Metrics, Readiness, create_app, serve_http
from gateway.http.budget_metrics import BudgetMetrics
from tests.gateway.http.conftest import ADMIN_TOKEN

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


async def test_the_admin_sees_who_is_over_budget_until_when_in_the_console_and_metrics(home: Path) -> None:
    client = ScriptedClient(default=costly_echo)
    config = open_config(budgets={"person": {"day_tokens": 100}, "overall": {"month_tokens": 1000}})
    async with backbone(home, client=client, config=config) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        await b.gateway.pipeline.handle(dm("again", event="e2", chat_id="dm-ada-2"))
        await b.wait_sent(2)
        storage = b.runtime.storage
        person = await storage.identity.account_person("test", "ada")
        assert person is not None

        metrics = Metrics(storage.admin)
        metrics.watch_budgets(BudgetMetrics(BudgetPolicy(b.runtime.settings.budgets), storage.budgets))
        scraped = (await metrics.render()).decode()
        assert 'mnemogate_budget_refusals_total{scope="person"} 1.0' in scraped
        assert 'mnemogate_budget_spend_ratio{limit="month_tokens",scope="overall"} 0.12' in scraped
        assert 'mnemogate_budget_spend_ratio{limit="day_tokens",scope="person"} 1.2' in scraped
        assert "mnemogate_budget_persons_over 1.0" in scraped

        backend = AdminBackend(
            storage.admin,
            storage.agent,
            b.runtime.memory,
            b.runtime.search,
            console=storage.console,
            budgets=storage.budgets,
        )
        app = create_app(
            Readiness({}),
            http=HttpSettings(admin_token=SecretStr(ADMIN_TOKEN)),
            metrics=metrics,
            admin=backend,
        )
        async with serve_http(app, "127.0.0.1", 0) as server:
            port = server.servers[0].sockets[0].getsockname()[1]
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as browser:
                signed = await browser.post("/admin/sign-in", data={"token": ADMIN_TOKEN, "next": "/admin/"})
                assert signed.status_code == 303, signed.text
                overview = (await browser.get("/admin/")).text
                assert "Over budget" in overview and f"/ui/persons/{person}" in overview
                page = (await browser.get(f"/admin/ui/persons/{person}")).text
                assert "over budget until" in page and "day_tokens" in page
