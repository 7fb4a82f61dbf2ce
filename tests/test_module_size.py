"""Every source module stays small enough to read: at most 500 lines."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("gateway", "agent_core", "adapters", "bench")
LIMIT = 500


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_the_packages_exist() -> None:
    assert len(_modules()) > 10


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_is_at_most_500_lines(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= LIMIT, f"{path.relative_to(ROOT)} has {lines} lines; split it by responsibility"
