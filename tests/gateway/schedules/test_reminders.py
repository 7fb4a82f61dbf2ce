"""Reminders and scheduled turns through the real gateway, with the scheduler on a clock the test moves:
what a person asks for fires at the right instant, arrives once, lands in their conversation and can be
answered there; restarts and misses, ended conversations, commands and limits behave as people expect."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from agent_core.actor import Actor
from agent_core.llm import LLMRequest
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.schedules import ManualClock, ScheduleRequest

from .harness import START, World, world, world_config


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


async def ada(w: World) -> Actor:
    """Ada in her conversation (after she said something)."""
    person = await w.runtime.storage.identity.account_person("test", "ada")
    assert person is not None
    (job, *_) = await w.runtime.storage.queue.jobs()
    return Actor(person, conversation_id=job.conversation_id, platform="test", account_id="ada")


async def test_remind_me_in_90_seconds_fires_at_90_seconds_and_arrives_once(home: Path) -> None:
    async with world(home) as w:
        await w.say("remind me in 90 seconds to stretch", event="e1")
        await w.idle()
        assert w.texts() == ["[offline model] Okay — reminder #1 is set for 2030-03-17 17:48 UTC."]
        assert await w.tick(advance_s=89) == []
        (fired,) = await w.tick(advance_s=1)
        assert (fired.outcome, fired.occurrence_at) == ("fired", START + 90)
        await w.idle()
        assert w.texts()[1:] == ["⏰ Reminder: stretch"]
        assert await w.tick(advance_s=3600) == []
        await w.idle()
        assert w.texts().count("⏰ Reminder: stretch") == 1
        (run,) = await w.runtime.storage.schedules.runs()
        assert (run.task, run.delivery, run.conversation_id) == (
            "ran",
            "sent",
            (await ada(w)).conversation_id,
        )


async def test_a_reply_to_a_reminder_is_answered_in_the_same_conversation_with_it_in_the_history(
    home: Path,
) -> None:
    def answer(request: LLMRequest) -> ScriptStep:
        return ScriptStep.reply(f"answered {request.messages[-1].content}")

    model = ScriptedClient(default=answer)
    async with world(home, client=model) as w:
        await w.say("hello", event="e1")
        await w.idle()
        assert w.runtime.schedules is not None
        request = ScheduleRequest(after="10 minutes", message="⏰ Time to call the dentist")
        await w.runtime.schedules.add_for(await ada(w), request)
        await w.tick(advance_s=600)
        await w.idle()
        await w.say("done — what was that about again?", event="e2")
        await w.idle()
        asked = model.requests[-1]
        history = [(m.role, m.content) for m in asked.messages]
        assert history[-2:] == [
            ("assistant", "⏰ Time to call the dentist"),
            ("user", "done — what was that about again?"),
        ]
        assert w.texts()[-2:] == ["⏰ Time to call the dentist", "answered done — what was that about again?"]
        conversations = {job.conversation_id for job in await w.runtime.storage.queue.jobs()}
        assert len(conversations) == 1 and len(model.requests) == 2  # the reminder cost no model call


async def test_a_scheduled_prompt_runs_as_a_turn_that_knows_it_was_scheduled(home: Path) -> None:
    model = ScriptedClient(default=lambda request: ScriptStep.reply("Here is your weekly summary."))
    async with world(home, client=model) as w:
        await w.say("hello", event="e1")
        await w.idle()
        assert w.runtime.schedules is not None
        created = await w.runtime.schedules.add_for(
            await ada(w), ScheduleRequest(cron="0 18 * * 0", prompt="summarise what we decided this week")
        )
        assert created.next_run_at == utc("2030-03-17T18:00")
        await w.tick(advance_s=created.next_run_at - START)
        await w.idle()
        said = model.requests[-1].messages[-1]
        assert said.role == "user" and said.content.startswith(
            f"[Scheduled task #{created.id} (cron 0 18 * * 0"
        )
        assert said.content.endswith("\nsummarise what we decided this week")
        assert w.texts()[-1] == "Here is your weekly summary."
        (run,) = await w.runtime.storage.schedules.runs()
        assert (run.task, run.delivery) == ("ran", "sent")
        again = await w.runtime.storage.schedules.get(created.id)
        assert again is not None and again.next_run_at == utc("2030-03-24T18:00")


async def test_a_daily_cron_fires_at_nine_local_time_on_both_sides_of_a_dst_change(home: Path) -> None:
    clock = ManualClock(utc("2030-03-08T12:00"))
    async with world(home, clock=clock) as w:
        await w.say("/timezone America/New_York", event="e0")
        await w.say("hello", event="e1")
        await w.idle()
        assert w.runtime.schedules is not None
        await w.runtime.schedules.add_for(await ada(w), ScheduleRequest(cron="0 9 * * *", message="morning"))
        for due in ("2030-03-09T14:00", "2030-03-10T13:00", "2030-03-11T13:00"):  # EST, then EDT
            clock.set(utc(due) - 1)
            await w.tick()
            clock.set(utc(due))
            (fired,) = await w.tick()
            assert fired.occurrence_at == utc(due)
        runs = await w.runtime.storage.schedules.runs()
        assert sorted(r.occurrence_at for r in runs) == [
            utc("2030-03-08T14:00"),  # the first tick above found Friday's run due
            utc("2030-03-09T14:00"),
            utc("2030-03-10T13:00"),
            utc("2030-03-11T13:00"),
        ]


async def test_schedules_survive_a_restart_and_a_missed_run_is_caught_up_once(home: Path) -> None:
    clock = ManualClock(START)
    async with world(home, clock=clock) as w:
        await w.say("hello", event="e1")
        await w.idle()
        assert w.runtime.schedules is not None
        await w.runtime.schedules.add_for(
            await ada(w), ScheduleRequest(every="10 minutes", message="drink water")
        )
    clock.advance(3600 + 30)  # nothing ran for an hour: six runs were due
    async with world(home, clock=clock) as w:
        (fired,) = await w.tick()
        await w.idle()
        assert fired.occurrence_at == START + 3600
        assert w.texts() == ["drink water"]  # the latest was 30 s late: on time
        (run,) = await w.runtime.storage.schedules.runs()
        assert (run.catch_up, run.missed) == (False, 5)  # the latest of them was on time; five were missed
        clock.advance(600)
        assert [r.occurrence_at for r in await w.tick()] == [START + 4200]


async def test_a_reminder_for_an_ended_conversation_pauses_and_reminders_say_why(home: Path) -> None:
    async with world(home) as w:
        await w.say("remind me in 5 minutes to stretch", event="e1")
        await w.idle()
        await w.say("/new", event="e2")
        (fired,) = await w.tick(advance_s=300)
        assert fired.outcome == "paused"
        listing = await w.command("/reminders", event="e3")
        assert "paused: its conversation has ended (/new or a reset)" in listing
        assert "⏰ Reminder: stretch" not in w.texts()


async def test_reminders_are_listed_and_cancelled_and_the_time_zone_is_the_persons(home: Path) -> None:
    async with world(home) as w:
        await w.say("/timezone Europe/Berlin", event="e0")
        await w.say("remind me at 21:30 to water the plants", event="e1")
        await w.say("remind me in 2 hours to stretch", event="e2")
        await w.idle()
        listing = await w.command("/reminders", event="e3")
        assert "#1 message '⏰ Reminder: water the plants' — once at 2030-03-17 21:30 CET" in listing
        assert "#2 message '⏰ Reminder: stretch' — once at 2030-03-17 20:46 CET" in listing
        cancelled = await w.command("/reminders cancel 1", event="e4")
        assert cancelled.startswith("Cancelled: #1 message '⏰ Reminder: water the plants'")
        again = await w.command("/reminders cancel 1", event="e5")
        assert again == "You have no open reminder or scheduled task #1."
        fired = await w.tick(advance_s=7200)
        assert [run.schedule_id for run in fired] == [2]


async def test_a_person_cannot_keep_more_reminders_than_allowed(home: Path) -> None:
    config = world_config(schedules={"max_per_person": 2})
    async with world(home, config=config) as w:
        for n in range(3):
            await w.say(f"remind me in {n + 1} hours to stretch {n}", event=f"e{n}")
            await w.idle()
        assert w.texts()[-1] == (
            "[offline model] The schedule tool reported an error: There are already 2 open reminders and "
            "scheduled tasks for this person (the most allowed); cancel one first (/reminders)."
        )


async def test_a_reminder_for_a_platform_no_longer_enabled_pauses_saying_so(home: Path) -> None:
    clock = ManualClock(START)
    async with world(home, clock=clock) as w:
        await w.say("remind me in 5 minutes to stretch", event="e1")
        await w.idle()
    clock.advance(300)
    disabled = world_config(adapters={"test": {"enabled": False}})
    async with world(home, clock=clock, config=disabled) as w:
        (fired,) = await w.tick()
        assert fired.outcome == "paused"
        (paused,) = await w.runtime.storage.schedules.find()
        assert (paused.state, paused.reason) == ("paused", "the test platform is not enabled")
        assert w.texts() == []
