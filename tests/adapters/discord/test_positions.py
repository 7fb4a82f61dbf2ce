"""Checkpoint bookkeeping: a channel's checkpoint never passes a message that was not handed over."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping

import pytest

from adapters.discord.positions import ChannelPositions, checkpoint_key


class MemoryCheckpoints:
    """The ``Checkpoints`` contract in memory (forward-only); ``broken`` makes every write fail."""

    def __init__(self, stored: Mapping[str, int] | None = None) -> None:
        self.stored = dict(stored or {})
        self.broken = False

    async def load(self) -> Mapping[str, int]:
        return dict(self.stored)

    async def advance(self, key: str, position: int) -> None:
        if self.broken:
            raise OSError("disk full")
        self.stored[key] = max(position, self.stored.get(key, position))

    async def forget(self, keys: Collection[str]) -> None:
        for key in keys:
            self.stored.pop(key, None)


KEY = checkpoint_key(7)


async def _positions(store: MemoryCheckpoints) -> ChannelPositions:
    positions = ChannelPositions(store)
    await positions.load()
    return positions


async def test_hand_offs_finishing_out_of_order_never_skip_one_still_in_flight() -> None:
    store = MemoryCheckpoints({KEY: 5})
    positions = await _positions(store)
    for message in (10, 11, 12):
        positions.begin(7, message)
    await positions.finish(7, 12, True)
    assert store.stored[KEY] == 9  # a restart re-reads from just before the one still in flight
    await positions.finish(7, 10, True)
    assert store.stored[KEY] == 10
    await positions.finish(7, 11, True)
    assert store.stored[KEY] == 12


async def test_a_failed_hand_off_is_a_barrier_until_the_same_message_is_handed_over() -> None:
    store = MemoryCheckpoints({KEY: 5})
    positions = await _positions(store)
    positions.begin(7, 10)
    positions.begin(7, 11)
    await positions.finish(7, 10, False)
    await positions.finish(7, 11, True)
    assert store.stored[KEY] == 9
    positions.begin(7, 10)  # the catch-up after a reconnect hands it over again
    await positions.finish(7, 10, True)
    assert store.stored[KEY] == 11


async def test_a_catch_up_window_holds_the_checkpoint_until_it_read_the_channel() -> None:
    store = MemoryCheckpoints({KEY: 5})
    positions = await _positions(store)
    window = positions.open_window()
    assert window.starts == {7: 5}
    positions.begin(7, 20)  # a live message while the window still reads older history
    await positions.finish(7, 20, True)
    assert store.stored[KEY] == 5
    positions.begin(7, 8)
    await positions.finish(7, 8, True, window)
    assert store.stored[KEY] == 8
    await positions.close_window(window, 7)
    assert store.stored[KEY] == 20


async def test_a_newer_window_closing_a_channel_supersedes_an_older_one_left_open() -> None:
    store = MemoryCheckpoints({KEY: 5})
    positions = await _positions(store)
    failed_read = positions.open_window()
    positions.begin(7, 9)
    await positions.finish(7, 9, True, failed_read)
    later = positions.open_window()
    assert later.starts == {7: 9}
    positions.begin(7, 30)
    await positions.finish(7, 30, True, later)
    await positions.close_window(later, 7)
    assert store.stored[KEY] == 30


async def test_a_new_channel_whose_first_message_failed_is_remembered_for_the_restart() -> None:
    store = MemoryCheckpoints()
    positions = await _positions(store)
    positions.begin(8, 100)
    await positions.finish(8, 100, False)
    assert store.stored == {checkpoint_key(8): 99}
    assert (await _positions(store)).open_window().starts == {8: 99}


async def test_a_failed_checkpoint_write_is_logged_and_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryCheckpoints({KEY: 5})
    positions = await _positions(store)
    store.broken = True
    positions.begin(7, 10)
    with caplog.at_level(logging.WARNING):
        await positions.finish(7, 10, True)
    assert "checkpoint for channel 7 not saved" in caplog.text and store.stored[KEY] == 5
    store.broken = False
    positions.begin(7, 11)
    await positions.finish(7, 11, True)
    assert store.stored[KEY] == 11


async def test_live_hand_offs_held_back_by_a_catch_up_go_on_in_arrival_order() -> None:
    positions = await _positions(MemoryCheckpoints({KEY: 10}))
    window = positions.open_window()
    order: list[int] = []

    async def live(message_id: int) -> None:  # the adapter's hand-off, up to the sink
        positions.begin(7, message_id)
        await positions.caught_up(7)
        order.append(message_id)

    waiting = [asyncio.create_task(live(n)) for n in (11, 12)]
    await asyncio.sleep(0)  # let both reach caught_up (one loop turn, not a wait for time)

    async def catch_up_ends() -> None:
        positions.release_all(window)

    # The task of a newer message is created in the same loop turn as the release: it must queue up.
    await asyncio.gather(asyncio.create_task(catch_up_ends()), asyncio.create_task(live(13)), *waiting)
    assert order == [11, 12, 13]


async def test_the_history_read_stops_below_the_first_live_message_of_the_window() -> None:
    positions = await _positions(MemoryCheckpoints({KEY: 10}))
    window = positions.open_window(before=1_000)
    assert positions.history_bound(window, 7) == 1_000
    positions.begin(7, 20)  # arrived live while the window still reads channel 7
    positions.begin(7, 15, live=False)  # handed over by the catch-up itself: no bound
    assert positions.history_bound(window, 7) == 20
