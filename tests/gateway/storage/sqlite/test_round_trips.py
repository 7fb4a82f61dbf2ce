"""A plain turn's state.db round trips, counted the way ``bench gateway`` reports them: at most ten, with
the worker pool's wake after the turn (a claim that finds nothing) left out of the count."""

from __future__ import annotations

from pathlib import Path

from bench import gateway


async def test_a_plain_turn_takes_at_most_ten_round_trips_and_idle_wakes_are_not_counted(
    tmp_path: Path,
) -> None:
    figures = await gateway.count_round_trips(tmp_path, gateway.bench_config(16), 6, messages=3)
    plain, writes = figures["db_round_trips_per_turn"], figures["db_writes_per_turn"]
    assert 0 < writes <= plain <= 10
    assert figures["db_idle_round_trips_per_turn"] >= 1  # it happened, after the count stopped
    # A first message also creates its person and account and freezes the segment's prompt.
    assert figures["db_round_trips_first_turn"] > plain
    assert figures["db_writes_first_turn"] > writes
