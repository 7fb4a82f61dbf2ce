"""Provider tests never phone home: the mem0 SDK's telemetry is off and its state dir is temporary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _quiet_sdks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("MEM0_TELEMETRY", "false")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0"))
    for name in ("HONCHO_API_KEY", "MEM0_API_KEY", "HONCHO_URL", "HONCHO_WORKSPACE_ID"):
        monkeypatch.delenv(name, raising=False)
    yield
