"""The catch-up against live traffic: no gap at a new session, channel order, retries, cost, cancellation.

Real discord.py against the fake Discord; checkpoints in a real state.db (``StateCheckpoints``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from adapters.discord import DiscordAdapter
from gateway.adapter_checkpoints import StateCheckpoints
from gateway.contracts import InboundMessage
from tests.adapters.discord.conftest import DM_CHANNEL, checkpoint_reaches, checkpointed_adapter
from tests.adapters.fakes.discord_server import FakeDiscordServer, Json, user_payload
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until

ALICE = user_payload(42, "alice")


@dataclass
class RefusingSink(RecordingSink):
    """Refuses every offer of the messages in ``refuse_ids`` (the gateway keeps failing on them)."""

    refuse_ids: frozenset[str] = frozenset()

    async def __call__(self, message: InboundMessage) -> None:
        if message.event_id in self.refuse_ids:
            self.offered.append(message)
            raise RuntimeError("state.db is locked")
        await super().__call__(message)


@dataclass
class DurableSink(RecordingSink):
    """A sink whose store write, once begun, finishes even when its caller is cancelled."""

    written: asyncio.Event = field(default_factory=asyncio.Event)
    cancels: int = 0

    async def __call__(self, message: InboundMessage) -> None:
        self.offered.append(message)
        while not self.written.is_set():
            try:
                await asyncio.shield(self.written.wait())
            except asyncio.CancelledError:
                self.cancels += 1
        self.received.append(message)


def _dm(fake: FakeDiscordServer, text: str) -> Json:
    return fake.message(ALICE, text, channel_id=DM_CHANNEL, guild=False)


async def _away(fake: FakeDiscordServer, *messages: Json) -> list[str]:
    for message in messages:
        await fake.post(message, deliver=False)
    return [message["id"] for message in messages]


def _in_dm(sink: RecordingSink) -> list[str]:
    return [m.event_id for m in sink.received if m.chat.chat_id == str(DM_CHANNEL)]


@contextlib.asynccontextmanager
async def _history_held(fake: FakeDiscordServer) -> AsyncIterator[asyncio.Event]:
    fake.hold_history = held = asyncio.Event()
    try:
        yield held
    finally:
        held.set()


async def test_a_live_message_during_the_guild_wait_does_not_skip_what_was_missed(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    [missed] = await _away(fake, _dm(fake, "missed while away"))
    sink = RecordingSink()
    # discord.py waits guild_ready_timeout after READY before on_ready, handing messages over meanwhile.
    adapter = checkpointed_adapter(fake, checkpoints, guild_ready_timeout_s=1.0)
    starting = asyncio.create_task(adapter.start(sink))
    await fake.wait_until_identified()
    live = _dm(fake, "live right after connecting")
    await fake.dispatch("MESSAGE_CREATE", live)
    assert not starting.done()  # sent inside the guild wait, before on_ready
    await starting
    async with adapter:
        await wait_until(lambda: len(set(_in_dm(sink))) >= 2, 10.0, "the missed and the live message")
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(live["id"]))
    # Under load the history read may also return the live message; the gateway's ledger dedupes it.
    assert list(dict.fromkeys(_in_dm(sink))) == [missed, live["id"]]


async def test_a_live_message_reaches_the_gateway_after_its_channels_missed_ones(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    missed = await _away(fake, _dm(fake, "missed 1"), _dm(fake, "missed 2"))
    sink = RecordingSink()
    async with _history_held(fake) as slow_history, await _started(fake, sink, checkpoints):
        await fake.wait_for_call("get_messages")
        live = _dm(fake, "live while the history is still loading")
        await fake.dispatch("MESSAGE_CREATE", live)
        # A later message of a channel with nothing to catch up shows the live one was already dispatched.
        elsewhere = fake.message(ALICE, "meanwhile in the guild", mention_bot=True)
        await fake.dispatch("MESSAGE_CREATE", elsewhere)
        await wait_until(lambda: len(sink.received) >= 1, 10.0, "the guild message")
        assert _in_dm(sink) == []  # the live DM waits for its channel's catch-up
        slow_history.set()
        await wait_until(lambda: len(_in_dm(sink)) >= 3, 10.0, "the DM channel caught up")
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(live["id"]))
    assert _in_dm(sink) == [*missed, live["id"]]
    assert sink.received[0].event_id == elsewhere["id"]


async def test_a_live_burst_during_the_catch_up_neither_crowds_out_nor_overtakes_the_missed_ones(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    start = fake.snowflake()
    for channel in (DM_CHANNEL, fake.channel_id):
        await checkpoints.advance(f"channel:{channel}", start)
    missed = {
        DM_CHANNEL: await _away(fake, _dm(fake, "missed dm 1"), _dm(fake, "missed dm 2")),
        fake.channel_id: await _away(
            fake, *(fake.message(ALICE, f"missed here {n}", mention_bot=True) for n in range(2))
        ),
    }
    sink = RecordingSink()
    adapter = checkpointed_adapter(fake, checkpoints, catch_up_limit=3)
    async with _history_held(fake) as slow_history:
        await adapter.start(sink)
        async with adapter:
            (first,) = await fake.wait_for_call("get_messages")  # held: the other channel is read later
            later = fake.channel_id if first.channel_id == DM_CHANNEL else DM_CHANNEL
            burst = [
                _dm(fake, f"live {n}")
                if later == DM_CHANNEL
                else fake.message(ALICE, f"live {n}", mention_bot=True)
                for n in range(4)
            ]
            for message in burst:
                await fake.dispatch("MESSAGE_CREATE", message)
            # A DM in a channel with nothing to catch up goes straight on: the burst was dispatched before it.
            elsewhere = fake.message(ALICE, "meanwhile", channel_id=DM_CHANNEL + 1, guild=False)
            await fake.dispatch("MESSAGE_CREATE", elsewhere)
            await wait_until(lambda: len(sink.received) >= 1, 10.0, "the other DM")
            slow_history.set()
            await wait_until(
                lambda: len(set(_in(sink, later))) >= 6, 10.0, "the missed and the live messages"
            )
    # The live burst (already in the channel's history when it is read) neither took up the limit nor
    # went ahead of the two messages missed while away.
    assert list(dict.fromkeys(_in(sink, later))) == [*missed[later], *(message["id"] for message in burst)]


def _in(sink: RecordingSink, channel_id: int) -> list[str]:
    return [m.event_id for m in sink.received if str(channel_id) in (m.chat.chat_id, m.chat.thread_id)]


async def test_a_live_message_goes_on_when_its_channels_catch_up_fails(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    start = fake.snowflake()
    await checkpoints.advance(f"channel:{DM_CHANNEL}", start)
    [missed] = await _away(fake, _dm(fake, "missed"))
    fake.fail_next["get_messages"] = [(400, {"message": "Bad Request", "code": 0}, {})]
    sink = RecordingSink()
    async with _history_held(fake) as slow_history, await _started(fake, sink, checkpoints):
        await fake.wait_for_call("get_messages")
        live = _dm(fake, "live")
        await fake.dispatch("MESSAGE_CREATE", live)
        slow_history.set()
        await wait_until(lambda: len(sink.received) >= 1, 10.0, "the live message")
    assert _in_dm(sink) == [live["id"]]
    assert (await checkpoints.load())[f"channel:{DM_CHANNEL}"] == start < int(missed)  # still a barrier


async def test_a_refused_live_message_is_retried_within_the_session(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    sink = RecordingSink(refuse=1)
    async with await _started(fake, sink, checkpoints):
        said = _dm(fake, "refused once")
        await fake.dispatch("MESSAGE_CREATE", said)
        await sink.wait_for(1)
        await checkpoint_reaches(checkpoints, DM_CHANNEL, int(said["id"]))
    assert [m.event_id for m in sink.offered] == [said["id"], said["id"]]


async def test_a_message_refused_by_every_retry_stays_a_barrier_and_stop_ends_the_retries(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints, caplog: pytest.LogCaptureFixture
) -> None:
    stuck, later = _dm(fake, "always refused"), _dm(fake, "accepted")
    sink = RefusingSink(refuse_ids=frozenset({stuck["id"]}))
    with caplog.at_level(logging.WARNING):
        async with await _started(fake, sink, checkpoints, retry_delays_s=(0.01, 0.02)):
            await fake.dispatch("MESSAGE_CREATE", stuck)
            await fake.dispatch("MESSAGE_CREATE", later)
            await wait_until(lambda: "still refused after 2 retries" in caplog.text, 10.0, "the retries")
            await sink.wait_for(1)
    assert [m.event_id for m in sink.offered].count(stuck["id"]) == 3
    assert (await checkpoints.load())[f"channel:{DM_CHANNEL}"] < int(stuck["id"])
    sink = RefusingSink(refuse_ids=frozenset({later["id"]}))
    adapter = await _started(fake, sink, checkpoints, retry_delays_s=(600.0,))
    await wait_until(lambda: len(sink.offered) == 2, 10.0, "the catch-up of both")
    await asyncio.wait_for(adapter.stop(), 5.0)  # a retry asleep for minutes does not hold stop up
    assert not [task for task in asyncio.all_tasks() if task.get_name() == "discord-hand-off-retry"]


async def test_a_quiet_channel_costs_no_history_request(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    [quiet] = await _away(fake, _dm(fake, "answered before the restart"))
    await checkpoints.advance(f"channel:{DM_CHANNEL}", int(quiet))
    await checkpoints.advance(f"channel:{fake.channel_id}", fake.snowflake())
    [missed] = await _away(fake, fake.message(ALICE, "missed", mention_bot=True))
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints):
        await sink.wait_for(1)
        await checkpoint_reaches(checkpoints, fake.channel_id, int(missed))
    assert {call.channel_id for call in fake.calls_to("get_channel")} == {DM_CHANNEL, fake.channel_id}
    assert [call.channel_id for call in fake.calls_to("get_messages")] == [fake.channel_id]


async def test_a_resumed_session_reads_no_history(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    await _away(fake, _dm(fake, "missed"))
    sink = RecordingSink()
    async with await _started(fake, sink, checkpoints) as adapter:
        await sink.wait_for(1)
        read_before = len(fake.calls_to("get_channel") + fake.calls_to("get_messages"))
        await fake.drop_connections()
        await wait_until(lambda: fake.resumed == 1 and adapter.health().connected, 15.0, "a resume")
        await fake.dispatch("MESSAGE_CREATE", _dm(fake, "after the resume"))
        await sink.wait_for(2)
    assert len(fake.calls_to("get_channel") + fake.calls_to("get_messages")) == read_before


async def test_cancelling_stop_ends_it_promptly_with_the_client_closed(
    fake: FakeDiscordServer, checkpoints: StateCheckpoints
) -> None:
    await checkpoints.advance(f"channel:{DM_CHANNEL}", fake.snowflake())
    await _away(fake, _dm(fake, "missed"))
    sink = DurableSink()
    adapter = await _started(fake, sink, checkpoints, stop_grace_s=0.05)
    await wait_until(lambda: len(sink.offered) == 1, 10.0, "the catch-up's hand-off")
    stopping = asyncio.create_task(adapter.stop())
    await wait_until(lambda: sink.cancels >= 1, 10.0, "stop to cancel the catch-up after its grace")
    stopping.cancel()  # e.g. the gateway's shutdown gives up on this adapter
    try:
        await wait_until(stopping.done, 2.0, "the cancelled stop to end")
        assert stopping.cancelled()
        assert not adapter.health().connected
        await wait_until(lambda: fake.connections == 0, 2.0, "the gateway connection closed")
    finally:
        sink.written.set()
        catching_up = [t for t in asyncio.all_tasks() if t.get_name() == "discord-catch-up"]
        await wait_until(lambda: all(t.done() for t in catching_up), 10.0, "the catch-up to end")


async def _started(
    fake: FakeDiscordServer, sink: RecordingSink, checkpoints: StateCheckpoints, **options: Any
) -> DiscordAdapter:
    adapter = checkpointed_adapter(fake, checkpoints, **options)
    await adapter.start(sink)
    return adapter
