"""The store benchmark runs its writer processes to a clean end and reports what an append costs the CPU,
on both backends (the server's share on PostgreSQL, whose server runs on this machine)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.cli_process import mnemogate


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_bench_store_is_clean_and_reports_the_cpu_an_append_costs(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    dsn = ["--dsn", request.getfixturevalue("postgres_database")] if backend == "postgres" else []
    run = mnemogate(
        "bench", "store", "--backend", backend, *dsn, "--processes", "2", "--messages", "40",
        "--dir", str(tmp_path),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    clean = ("lost", "duplicated", "unsearchable", "errors")
    assert {name: figures[name] for name in clean} == dict.fromkeys(clean, 0)
    assert figures["writer_cpu_ms_per_msg"] > 0 and figures["cpu_cores"] >= 1
    spent = figures["writer_cpu_ms_per_msg"] + figures.get("server_cpu_ms_per_msg", 0.0)
    assert figures["cpu_bound_msgs_per_s"] == pytest.approx(figures["cpu_cores"] * 1000 / spent, rel=0.01)
    if backend == "postgres" and urlsplit(dsn[1]).hostname in {"127.0.0.1", "localhost", None}:
        # A server on this machine: storing a message (its search vector, two GIN indexes) costs it CPU too.
        assert figures["server_cpu_ms_per_msg"] > 0
