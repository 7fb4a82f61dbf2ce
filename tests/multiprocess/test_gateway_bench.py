"""The gateway benchmark runs end to end with worker processes and reports a clean run, on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import gateway
from tests.cli_process import mnemogate


def test_bench_gateway_small_run_is_complete_and_clean(tmp_path: Path) -> None:
    figures = gateway.run(tmp_path, conversations=20, messages=3, workers=2)
    assert figures["replies"] == 60
    assert (figures["missing"], figures["duplicates"], figures["overlaps"]) == (0, 0, 0)
    assert figures["turns_per_s"] > 0 and 0 < figures["p50_ms"] <= figures["p99_ms"]


def test_bench_gateway_on_three_postgres_hosts_is_clean_and_fails_over(
    tmp_path: Path, postgres_database: str
) -> None:
    run = mnemogate(
        "bench", "gateway", "--backend", "postgres", "--dsn", postgres_database, "--hosts", "3",
        "--lease-s", "2", "--conversations", "15", "--messages", "2", "--dir", str(tmp_path),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert (figures["backend"], figures["hosts"], figures["replies"]) == ("postgres", 3, 30)
    assert (figures["missing"], figures["duplicates"], figures["overlaps"]) == (0, 0, 0)
    assert figures["failover_generation"] == 2, "another host took the killed owner's adapter over"
    assert figures["db_round_trips_per_turn"] > 0 and figures["db_bytes"] > 0
    # The server's own counters over the run: every turn costs transactions and written rows there.
    assert figures["pg_transactions_per_turn"] > 1 and figures["pg_tuples_written_per_turn"] > 1


def test_bench_gateway_refuses_hosts_on_sqlite(tmp_path: Path) -> None:
    run = mnemogate("bench", "gateway", "--hosts", "2", "--dir", str(tmp_path))
    assert run.returncode != 0
    assert "--hosts needs --backend postgres" in run.stderr


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_bench_search_reports_latency_on_each_backend(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    dsn = ["--dsn", request.getfixturevalue("postgres_database")] if backend == "postgres" else []
    run = mnemogate(
        "bench", "search", "--backend", backend, *dsn, "--messages", "1500", "--dir", str(tmp_path)
    )
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert figures["backend"] == backend and figures["messages"] == 1500 and figures["indexed"]
    assert figures["queries_without_results"] < figures["queries"] and figures["p50_ms"] > 0
