"""The memory benchmark runs real processes and reports no lost adds."""

from __future__ import annotations

from pathlib import Path

from bench.memory import run


def test_small_benchmark_run_loses_nothing(tmp_path: Path) -> None:
    figures = run(tmp_path, processes=2, ops=10)
    assert figures["ok"] == 20 and figures["failed"] == 0 and figures["lost"] == 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"]
