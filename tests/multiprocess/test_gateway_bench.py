"""The gateway benchmark runs end to end with worker processes and reports a clean run."""

from __future__ import annotations

from pathlib import Path

from bench import gateway


def test_bench_gateway_small_run_is_complete_and_clean(tmp_path: Path) -> None:
    figures = gateway.run(tmp_path, conversations=20, messages=3, workers=2)
    assert figures["replies"] == 60
    assert (figures["missing"], figures["duplicates"], figures["overlaps"]) == (0, 0, 0)
    assert figures["turns_per_s"] > 0 and 0 < figures["p50_ms"] <= figures["p99_ms"]
