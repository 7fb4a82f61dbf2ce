"""``mnemogate bench growth`` runs the serve path end to end and prints its memory and disk figures."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_process import mnemogate


def test_bench_growth_prints_figures_per_1000_messages(tmp_path: Path) -> None:
    result = mnemogate(
        "bench",
        "growth",
        "--messages",
        "60",
        "--chats",
        "6",
        "--reply-chars",
        "500",
        "--json",
        "--dir",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["messages"] == 60 and figures["outbox_rows"] == 60
    assert set(figures["per_1000"]) == {"rss_mb", "state_db_mb", "wal_mb", "search_db_mb", "db_total_mb"}
    # Where the bytes sit (state.db or its WAL) depends on when the checkpointer last ran; together they grow.
    assert figures["end"]["db_total_mb"] > 0 and figures["end"]["rss_mb"] > 0
    assert list(tmp_path.iterdir()) == []  # the bench's home is removed afterwards
