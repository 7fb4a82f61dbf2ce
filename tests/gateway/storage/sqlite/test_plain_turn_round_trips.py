"""What a plain turn costs on SQLite after the round-trip work: seven trips, four of them writes.

Reads: the ledger look (dedupe), the account look (access), the turn's tip read. Writes: enqueue, the
claim (no look first: the worker was woken by the local enqueue), the reply step with its usage (one
append), the job-completing transaction. A regression to a separate usage write or a claim that looks
first fails here before it reaches the ten-trip ceiling of ``test_round_trips``.
"""

from __future__ import annotations

from pathlib import Path

from bench import gateway


async def test_a_plain_turn_takes_seven_round_trips_of_which_four_are_writes(tmp_path: Path) -> None:
    figures = await gateway.count_round_trips(tmp_path, gateway.bench_config(16), 6, messages=3)
    assert figures["db_round_trips_per_turn"] <= 7
    assert figures["db_writes_per_turn"] <= 4
