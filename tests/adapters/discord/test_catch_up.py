"""After a restart the Discord adapter catches up what its known channels got while it was away.

Real discord.py against the fake Discord; checkpoints in a real state.db (``StateCheckpoints``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import pytest

from adapters.discord import DiscordAdapter
from gateway.adapter_checkpoints import StateCheckpoints
from tests.adapters.discord.conftest import DM_CHANNEL, NO_RETRIES, checkpoint_reaches, checkpointed_adapter
from tests.adapters.fakes.discord_server import FakeDiscordServer, Json, user_payload
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until

ALICE = user_payload(42, "alice")
OTHER_BOT = user_payload(55, "otherbot", bot=True)


async def _started(
    fake: FakeDiscordServer,
    sink: RecordingSink,
    checkpoints: StateCheckpoints,
    *,
    retry_delays_s: Sequence[float] = (0.01, 0.02),
    **options: Any,
) -> DiscordAdapter:
    adapter = checkpointed_adapter(fake, checkpoints, retry_delays_s=retry_delays_s, **options)
    await adapter.start(sink)
    return adapter


async def _away(fake: FakeDiscordServer, *messages: Json) -> list[str]:
    for message in messages:
        await fake.post(message, deliver=False)
    return [message["id"] for message in messages]


async def test_the_catch_up_hands_over_what_came_after_the_checkpoint_in_order(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    seen = fake.message(ALICE, "already answered", mention_bot=True)
    seen_dm = fake.message(ALICE, "old dm", channel_id=DM_CHANNEL, guild=False)
    await _away(fake, seen, seen_dm)
    await checkpoints.advance(f"channel:{fake.channel_id}", int(seen["id"]))
    await checkpoints.advance(f"channel:{DM_CHANNEL}", int(seen_dm["id"]))
    first, chatter, own, other_bot, second = await _away(
        fake,
        fake.message(ALICE, "first while away", mention_bot=True),
        fake.message(ALICE, "just chatting"),
        fake.message(fake.bot, "my own words"),
        fake.message(OTHER_BOT, "beep", mention_bot=True),
        fake.message(ALICE, "second while away", mention_bot=True),
    )
    [dm] = await _away(fake, fake.message(ALICE, "dm while away", channel_id=DM_CHANNEL, guild=False))
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints):
        await sink.wait_for(4)
        await checkpoint_reaches(checkpoints, fake.channel_id, int(second))
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(dm))
    guild = [m for m in sink.received if m.chat.chat_id == str(fake.channel_id)]
    assert [m.event_id for m in guild] == [first, chatter, second]  # no bot's message, nothing before
    assert [m.mentions_bot for m in guild] == [True, False, True]  # as live: the gateway decides
    assert [m.text for m in sink.received if m.chat.chat_id == str(DM_CHANNEL)] == ["dm while away"]
    assert len(sink.received) == 4
    # Read newest first down to the checkpoints: nothing older than them was handed over again.
    assert {call.channel_id for call in fake.calls_to("get_messages")} == {fake.channel_id, DM_CHANNEL}
    assert all("after" not in call.body for call in fake.calls_to("get_messages"))
    assert own and other_bot  # filtered out, yet the checkpoint moved past both (see the last message)


async def test_the_checkpoint_moves_past_messages_that_are_not_for_the_bot(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints):
        own = fake.message(fake.bot, "my own echo")
        await fake.dispatch("MESSAGE_CREATE", own)
        await checkpoint_reaches(checkpoints, fake.channel_id, int(own["id"]))
        [last] = await _away(fake, fake.message(OTHER_BOT, "beep", mention_bot=True))
    async with await _started(fake, sink, checkpoints):
        await checkpoint_reaches(checkpoints, fake.channel_id, int(last))
    assert sink.received == []


async def test_a_message_the_gateway_refused_is_handed_over_again_after_the_next_start(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{fake.channel_id}", fake.snowflake())
    refused, accepted = await _away(
        fake,
        fake.message(ALICE, "refused once", mention_bot=True),
        fake.message(ALICE, "accepted", mention_bot=True),
    )
    sink = RecordingSink(refuse=1)
    async with await _started(fake, sink, checkpoints, retry_delays_s=NO_RETRIES):
        await sink.wait_for(1)
    assert [m.event_id for m in sink.received] == [accepted]
    assert (await checkpoints.load())[f"channel:{fake.channel_id}"] < int(refused)  # the barrier
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints):
        await checkpoint_reaches(checkpoints, fake.channel_id, int(accepted))
    assert [m.event_id for m in sink.received] == [refused, accepted]  # the ledger dedupes the second


async def test_a_live_message_refused_in_a_new_channel_is_caught_up_after_the_next_start(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    sink = RecordingSink(refuse=1)
    said = fake.message(ALICE, "first words", channel_id=DM_CHANNEL, guild=False)
    async with await _started(fake, sink, checkpoints, retry_delays_s=NO_RETRIES):
        await fake.dispatch("MESSAGE_CREATE", said)
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(said["id"]) - 1)
    assert sink.received == []
    async with await _started(fake, sink, checkpoints):
        [message] = await sink.wait_for(1)
    assert message.event_id == said["id"]


async def test_a_first_message_in_flight_when_the_process_dies_is_caught_up_after_the_next_start(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    stuck = RecordingSink(hold=asyncio.Event())  # the gateway never finishes storing it: the process dies
    said = fake.message(ALICE, "first words", channel_id=DM_CHANNEL, guild=False)
    async with await _started(fake, stuck, checkpoints, stop_grace_s=0.05):
        await fake.dispatch("MESSAGE_CREATE", said)
        # Before the hand-off even reaches the gateway, the channel is known to the store.
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(said["id"]) - 1)
        await wait_until(lambda: len(stuck.offered) == 1, 10.0, "the hand-off to begin")
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints):
        [message] = await sink.wait_for(1)
    assert message.event_id == said["id"]


async def test_the_catch_up_limit_hands_over_the_newest_missed_messages_and_says_so(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints, caplog: pytest.LogCaptureFixture
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    ids = await _away(
        fake, *[fake.message(ALICE, f"m{n}", channel_id=DM_CHANNEL, guild=False) for n in range(5)]
    )
    sink = RecordingSink()
    with caplog.at_level(logging.WARNING):
        async with await _started(fake, sink, checkpoints, catch_up_limit=3):
            await checkpoint_reaches(checkpoints, DM_CHANNEL, int(ids[-1]))
    assert [m.event_id for m in sink.received] == ids[-3:]  # the newest three, oldest of them first
    assert "catch_up_limit=3" in caplog.text and "older missed messages are skipped" in caplog.text
    assert [int(call.body["limit"]) for call in fake.calls_to("get_messages")] == [4]


async def test_a_long_absence_is_read_page_by_page_in_order(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    ids = await _away(
        fake, *[fake.message(ALICE, f"m{n}", channel_id=DM_CHANNEL, guild=False) for n in range(130)]
    )
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints):
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(ids[-1]))
    assert [m.event_id for m in sink.received] == ids
    assert len(fake.calls_to("get_messages")) == 2


async def test_catch_up_zero_turns_the_catch_up_off(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    await _away(fake, fake.message(ALICE, "while away", channel_id=DM_CHANNEL, guild=False))
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints, catch_up_limit=0):
        await fake.dispatch("MESSAGE_CREATE", fake.message(ALICE, "live", channel_id=DM_CHANNEL, guild=False))
        await sink.wait_for(1)
    assert [m.text for m in sink.received] == ["live"] and not fake.calls_to("get_messages")


async def test_a_deleted_or_forbidden_channel_is_skipped_and_the_rest_caught_up(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints, caplog: pytest.LogCaptureFixture
) -> None:
    await checkpoints.advance("channel:123456789", 1)  # a channel Discord no longer knows (404)
    await checkpoints.advance(f"channel:{fake.thread_id}", 1)  # the bot was removed (403)
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    [waiting] = await _away(fake, fake.message(ALICE, "still here", channel_id=DM_CHANNEL, guild=False))
    fake.fail_next["get_channel"] = [(403, {"message": "Missing Access", "code": 50001}, {})]
    sink = RecordingSink()
    with caplog.at_level(logging.WARNING):
        async with await _started(fake, sink, checkpoints) as adapter:
            [message] = await sink.wait_for(1)
            assert adapter.health().connected
    assert message.event_id == waiting
    assert "123456789 skipped" in caplog.text and "Missing Access" in caplog.text


async def test_stop_during_the_catch_up_lets_nothing_reach_the_sink_afterwards(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    ids = await _away(
        fake, *[fake.message(ALICE, f"m{n}", channel_id=DM_CHANNEL, guild=False) for n in range(3)]
    )
    sink = RecordingSink(hold=asyncio.Event())
    adapter = await _started(fake, sink, checkpoints)
    await wait_until(lambda: len(sink.offered) == 1, 10.0, "the catch-up's first hand-off")
    stopping = asyncio.create_task(adapter.stop())
    await wait_until(lambda: not adapter.health().connected, 10.0, "stop to begin")
    assert sink.hold is not None
    sink.hold.set()  # the hand-off in flight finishes, the catch-up goes no further
    await stopping
    assert [m.event_id for m in sink.offered] == [ids[0]]
    assert not [task for task in asyncio.all_tasks() if task.get_name() == "discord-catch-up"]
    assert (await checkpoints.load())[f"channel:{DM_CHANNEL}"] == int(ids[0])


async def test_a_reconnect_that_cannot_resume_catches_up_what_the_outage_missed(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints) as adapter:
        said = fake.message(ALICE, "before the outage", channel_id=DM_CHANNEL, guild=False)
        await fake.dispatch("MESSAGE_CREATE", said)
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(said["id"]))
        fake.refuse_connections = fake.refuse_resumes = True
        await fake.drop_connections()
        await wait_until(lambda: not adapter.health().connected, 10.0, "health to show the outage")
        [missed] = await _away(fake, fake.message(ALICE, "during", channel_id=DM_CHANNEL, guild=False))
        fake.refuse_connections = False
        await sink.wait_for(2, within_s=15.0)
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(missed))
    assert [m.text for m in sink.received] == ["before the outage", "during"]
    assert len(fake.identified) == 2 and fake.resumed == 0  # a fresh session, not a resume
