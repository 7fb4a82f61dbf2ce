"""A scheduled turn's delivery that fails with 502 twice is retried until it arrives, and the turn is not
run again: the real Telegram adapter (python-telegram-bot) against the loopback fake Bot API."""

from __future__ import annotations

from pathlib import Path

from adapters.telegram import create_adapter
from agent_core.actor import Actor
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.schedules import ScheduleRequest
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.adapters.telegram.conftest import adapter_settings

from .harness import world, world_config

ALICE = tg_user(4242, "Alice")


async def test_a_delivery_failing_with_502_twice_arrives_once_without_running_the_turn_again(
    home: Path,
) -> None:
    model = ScriptedClient(default=lambda request: ScriptStep.reply("Your summary: all is well."))
    async with FakeTelegramServer() as fake:
        telegram = create_adapter(adapter_settings(fake))
        async with world(home, client=model, adapter=telegram, config=world_config("telegram")) as w:
            fake.push(fake.message_update(private_chat(ALICE), ALICE, "hello"))
            await w.wait_for(lambda: len(fake.answered("sendMessage")) == 1, "the answer to hello")
            person = await w.runtime.storage.identity.account_person("telegram", "4242")
            (job,) = await w.runtime.storage.queue.jobs()
            assert person is not None and w.runtime.schedules is not None
            alice = Actor(person, conversation_id=job.conversation_id, platform="telegram")
            await w.runtime.schedules.add_for(alice, ScheduleRequest(after="5 minutes", prompt="my summary"))
            fake.fail_next("sendMessage", 502, "Bad Gateway")
            fake.fail_next("sendMessage", 502, "Bad Gateway")

            await w.tick(advance_s=300)
            await w.wait_for(lambda: len(fake.answered("sendMessage")) == 2, "the scheduled answer")
            await w.idle()

            summary = fake.answered("sendMessage")[-1]
            assert summary.call.params["chat_id"] == ALICE["id"] and "all is well" in summary.result["text"]
            assert len(fake.calls_of("sendMessage")) == 4  # hello's answer, two 502s, the summary
            assert len(model.requests) == 2  # hello and the scheduled turn, each once
            (run,) = await w.runtime.storage.schedules.runs()
            assert (run.task, run.delivery, run.delivery_attempts) == ("ran", "sent", 2)
            scheduled = next(j for j in await w.runtime.storage.queue.jobs() if j.id == run.job_id)
            assert (scheduled.state, scheduled.attempts) == ("done", 1)
