"""Threads the bot takes part in: remembered across a restart through the gateway's checkpoints in state.db,
within the configured window, and never at the cost of a message when the record cannot be written."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from adapters.slack import SlackAdapter, SlackSettings
from adapters.slack.threads import ThreadMemory, checkpoint_key, parse_checkpoint_key
from agent_core.storage.sqlite import StateStore
from gateway.adapter_checkpoints import StateCheckpoints
from gateway.contracts import Checkpoints, InboundMessage, OutboundMessage
from gateway.storage.sqlite import SqliteStorage, open_state_store
from tests.adapters.fakes.recording_sink import RecordingSink
from tests.adapters.fakes.slack_server import FakeSlackServer
from tests.adapters.slack.conftest import SlackEvents, adapter_settings, serve

ALICE, BOB = "UALICE", "UBOB"
GENERAL, RANDOM = "C0GENERAL", "C0RANDOM"
DAY_S = 86_400


@asynccontextmanager
async def running(
    fake: FakeSlackServer,
    sink: RecordingSink,
    checkpoints: Checkpoints | None = None,
    clock: Callable[[], float] = time.time,
    **overrides: Any,
) -> AsyncIterator[tuple[SlackAdapter, SlackEvents]]:
    """One adapter process's life: checkpoints offered before start (as ``mnemogate serve`` does)."""
    adapter = SlackAdapter(SlackSettings.model_validate(adapter_settings(fake, **overrides)), clock=clock)
    async with adapter:
        if checkpoints is not None:
            adapter.use_checkpoints(checkpoints)
        await adapter.start(sink)
        async with serve(adapter) as base_url, httpx.AsyncClient(base_url=base_url) as client:
            yield adapter, SlackEvents(client)


def fixed(at: float) -> Callable[[], float]:
    return lambda: at


async def plain_replies(
    fake: FakeSlackServer, slack: SlackEvents, sink: RecordingSink, threads: Mapping[str, str]
) -> dict[str, bool]:
    """Post a no-mention reply in each (channel -> thread_ts); whether each was addressed to the bot."""
    for channel, root in threads.items():
        await slack.post(fake.event_body(fake.message(channel, BOB, "and then?", thread_ts=root)))
    received: list[InboundMessage] = await sink.wait_for(len(threads))
    return {message.chat.chat_id: message.replies_to_bot for message in received}


def slack_checkpoints(state: StateStore) -> StateCheckpoints:
    return StateCheckpoints(SqliteStorage(state).checkpoints, "slack")


async def test_threads_the_bot_answered_or_was_mentioned_in_are_still_its_after_a_restart(
    tmp_path: Path, fake: FakeSlackServer
) -> None:
    before = RecordingSink()
    async with (
        open_state_store(tmp_path) as state,
        running(fake, before, slack_checkpoints(state)) as (
            adapter,
            slack,
        ),
    ):
        await slack.post(fake.event_body(fake.mention(GENERAL, ALICE, "what did we read?")))
        [asked] = await before.wait_for(1)
        await adapter.send(OutboundMessage(asked.chat, "You read *Dune*.", "k1"))  # answered in its thread
        someone_elses = fake.next_ts()
        await slack.post(fake.event_body(fake.mention(RANDOM, ALICE, "thoughts?", thread_ts=someone_elses)))
        await before.wait_for(2)  # mentioned there, not answered yet
    assert asked.chat.thread_id is not None

    after, unrelated = RecordingSink(), fake.next_ts()
    async with (
        open_state_store(tmp_path) as state,
        running(fake, after, slack_checkpoints(state)) as (
            _,
            slack,
        ),
    ):
        addressed = await plain_replies(
            fake, slack, after, {GENERAL: asked.chat.thread_id, RANDOM: someone_elses, "C0OTHER": unrelated}
        )
    assert addressed == {GENERAL: True, RANDOM: True, "C0OTHER": False}


async def test_a_thread_quiet_for_longer_than_the_window_is_forgotten_at_restart(
    tmp_path: Path, fake: FakeSlackServer
) -> None:
    async with open_state_store(tmp_path) as state:
        joined = RecordingSink()
        async with running(fake, joined, slack_checkpoints(state), thread_memory_days=2) as (
            _,
            slack,
        ):
            await slack.post(fake.event_body(fake.mention(GENERAL, ALICE, "remember this thread")))
            [asked] = await joined.wait_for(1)
        root = asked.chat.thread_id
        assert root is not None
        for days_later, remembered in ((1, True), (3, False)):
            sink = RecordingSink()
            later = time.time() + days_later * DAY_S
            async with running(fake, sink, slack_checkpoints(state), fixed(later), thread_memory_days=2) as (
                _,
                slack,
            ):
                assert await plain_replies(fake, slack, sink, {GENERAL: root}) == {GENERAL: remembered}
        # The thread went quiet for longer than the window: its record is gone too.
        assert await slack_checkpoints(state).load() == {}


class UnwritableCheckpoints:
    """A state.db that refuses every read and write of checkpoints."""

    async def load(self) -> Mapping[str, int]:
        raise OSError("disk I/O error")

    async def advance(self, key: str, position: int) -> None:
        raise OSError("disk I/O error")

    async def forget(self, keys: Collection[str]) -> None:
        raise OSError("disk I/O error")


async def test_checkpoints_that_cannot_be_written_cost_no_message_and_no_reply(fake: FakeSlackServer) -> None:
    sink = RecordingSink()
    async with running(fake, sink, UnwritableCheckpoints()) as (adapter, slack):
        assert (
            await slack.post(fake.event_body(fake.mention(GENERAL, ALICE, "still here?")))
        ).status_code == 200
        [asked] = await sink.wait_for(1)
        receipt = await adapter.send(OutboundMessage(asked.chat, "Yes.", "k1"))
        assert receipt.platform_message_id
        assert asked.chat.thread_id is not None
        await slack.post(fake.event_body(fake.message(GENERAL, BOB, "good", thread_ts=asked.chat.thread_id)))
        _, follow_up = await sink.wait_for(2)
    assert follow_up.replies_to_bot  # remembered in memory for this run


async def test_the_memory_stays_bounded_and_ignores_other_checkpoint_keys() -> None:
    now = time.time()
    memory = ThreadMemory(window_s=DAY_S, capacity=3, clock=lambda: now)
    threads = [("T1", "C1", f"{int(now) - 10 + n}.000001") for n in range(5)]
    for thread in threads:
        memory.join(thread, thread[2])
    assert len(memory) == 3
    assert [thread in memory for thread in threads] == [False, False, True, True, True]
    assert parse_checkpoint_key(checkpoint_key(threads[0])) == threads[0]
    assert parse_checkpoint_key(checkpoint_key(("", "D1", "5.0"))) == ("", "D1", "5.0")
    assert parse_checkpoint_key("channel:7") is None


class FlakyCheckpoints:
    """Refuses the first write, then keeps what it is given."""

    def __init__(self) -> None:
        self.stored: dict[str, int] = {}
        self.failures = 1

    async def load(self) -> Mapping[str, int]:
        return dict(self.stored)

    async def advance(self, key: str, position: int) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("database is locked")
        self.stored[key] = max(position, self.stored.get(key, position))

    async def forget(self, keys: Collection[str]) -> None:
        for key in keys:
            self.stored.pop(key, None)


async def test_a_thread_whose_record_failed_is_recorded_at_its_next_activity() -> None:
    now = time.time()
    store = FlakyCheckpoints()
    memory = ThreadMemory(window_s=DAY_S, clock=lambda: now)
    memory.use(store)
    thread = ("T1", "C1", f"{int(now) - 60}.000100")
    memory.join(thread, thread[2])
    await memory.flush()
    assert store.stored == {}  # the write failed; the thread is still known in memory
    await memory.load()  # the adapter started again
    memory.join(thread, f"{int(now) - 30}.000200")  # within the hour: tried again all the same
    await memory.flush()
    assert store.stored == {checkpoint_key(thread): int(now) - 30}
