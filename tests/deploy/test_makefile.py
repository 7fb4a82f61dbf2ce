"""``make run`` as a new user runs it: platform extras on request, bad ones refused, the stamp per extras.

Make's dry run (``-n``) prints what would run without running it, against a throwaway venv directory.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(venv: Path, *args: str, dry_run: bool = True) -> subprocess.CompletedProcess[str]:
    flags = ["-n"] if dry_run else []
    return subprocess.run(
        ["make", "-C", str(REPO), "--no-print-directory", *flags, *args, f"VENV={venv}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def installed_venv(tmp_path: Path) -> Path:
    """A venv directory that make believes is installed without extras (its python and stamp exist)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".installed-run").touch()
    return venv


def test_run_installs_the_platform_extras_asked_for(tmp_path: Path) -> None:
    venv = installed_venv(tmp_path)
    done = make(venv, "run", "EXTRAS=telegram,slack")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("pip install --quiet -e '.[slack,telegram]'") == 1
    assert f"touch {venv}/.installed-run-slack-telegram\n" in done.stdout
    assert "mnemogate serve" in done.stdout


def test_run_without_extras_installs_nothing_twice(tmp_path: Path) -> None:
    done = make(installed_venv(tmp_path), "run")
    assert done.returncode == 0, done.stderr
    assert "pip install" not in done.stdout
    assert "mnemogate serve" in done.stdout


def test_an_unknown_extra_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    done = make(installed_venv(tmp_path), "run", "EXTRAS=telgram", dry_run=False)
    assert done.returncode != 0
    assert "telgram" in done.stderr and "telegram" in done.stderr and "discord" in done.stderr


def test_check_config_has_a_make_target(tmp_path: Path) -> None:
    done = make(installed_venv(tmp_path), "check-config")
    assert done.returncode == 0, done.stderr
    assert "/bin/mnemogate check-config" in done.stdout


def test_the_makefile_knows_every_platform_extra_of_the_package() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    known = next(
        line for line in (REPO / "Makefile").read_text().splitlines() if line.startswith("KNOWN_EXTRAS")
    )
    assert set(known.split(":=")[1].split()) == set(extras) - {"test"}
