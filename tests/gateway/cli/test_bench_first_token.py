"""``mnemogate bench first-token`` runs a real ``serve`` against a fake streaming model; prints figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_process import mnemogate


@pytest.mark.parametrize("via", ["v1", "webchat"])
def test_bench_first_token_reports_what_the_gateway_adds(tmp_path: Path, via: str) -> None:
    result = mnemogate(
        *("bench", "first-token", "--via", via, "--requests", "3", "--warmup", "1", "--first-token-ms", "50"),
        *("--chunks", "3", "--json", "--dir", str(tmp_path)),
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["via"] == via and figures["requests"] == 3 and figures["model_delay_ms"] == 50
    for kind in ("direct", "first_token", "added"):
        assert figures[f"{kind}_p50_ms"] <= figures[f"{kind}_p99_ms"] <= figures[f"{kind}_max_ms"]
    assert figures["first_token_p50_ms"] >= figures["model_delay_ms"], "no token before the model's first"
