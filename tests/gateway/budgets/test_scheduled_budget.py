"""Scheduled prompts meet the same budget as messages: once a person's budget is reached, their scheduled
prompt is skipped with the limit as the reason (no job, no model call); their fixed reminders still arrive,
since a reminder's text is its answer and calls no model."""

from __future__ import annotations

import time
from pathlib import Path

from agent_core.llm import LLMRequest
from agent_core.llm.events import UsageEvent
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.budgets import BudgetPolicy, ScheduledBudget
from gateway.schedules import ManualClock, Scheduler, ScheduleRequest, ScheduleRules
from gateway.schedules.deployment import deliverable_platforms

from ..schedules.harness import world, world_config
from ..schedules.test_reminders import ada


def costly(request: LLMRequest) -> ScriptStep:
    return ScriptStep.reply("done", usage=UsageEvent(input_tokens=80, output_tokens=40))


async def test_a_reached_budget_skips_scheduled_prompts_but_not_reminders(home: Path) -> None:
    model = ScriptedClient(default=costly)
    config = world_config(budgets={"person": {"day_tokens": 100}})
    # Budgets count usage on the real clock (usage rows carry the time they were written).
    async with world(home, client=model, config=config, clock=ManualClock(time.time())) as w:
        settings, storage = w.runtime.settings, w.runtime.storage
        rules = ScheduleRules(
            settings.schedules,
            platforms=deliverable_platforms(settings),
            budget=ScheduledBudget(BudgetPolicy(settings.budgets), storage.budgets),
        )
        scheduler = Scheduler(storage.schedules, rules, clock=w.clock, signals=w.runtime.signals)
        await w.say("hello", event="e1")
        await w.idle()
        assert len(model.requests) == 1  # 120 tokens: the daily 100 are spent
        assert w.runtime.schedules is not None
        actor = await ada(w)
        prompt = await w.runtime.schedules.add_for(
            actor, ScheduleRequest(after="1m", prompt="summarise my day")
        )
        reminder = await w.runtime.schedules.add_for(actor, ScheduleRequest(after="1m", message="stretch!"))
        w.clock.advance(61)
        await scheduler.tick()
        await w.idle()
        assert len(model.requests) == 1  # the prompt made no model call
        skipped = await storage.schedules.get(prompt.id)
        assert skipped is not None and skipped.runs == 0 and skipped.missed == 1
        assert skipped.reason is not None and "person:" in skipped.reason and "day_tokens" in skipped.reason
        delivered = await storage.schedules.get(reminder.id)
        assert delivered is not None and delivered.runs == 1
        assert w.texts()[-1].startswith("stretch!")
