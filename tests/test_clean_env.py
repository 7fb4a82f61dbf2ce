"""Tests never run with a developer's real credentials: a platform token in the shell that runs
``make test`` would switch that platform on (a token alone enables it) in every gateway a test starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gateway.adapters_config import ADAPTER_CREDENTIALS

ROOT = Path(__file__).resolve().parent.parent
PLATFORM_VARIABLES = sorted(source.variable for sources in ADAPTER_CREDENTIALS.values() for source in sources)


def test_no_platform_credential_reaches_a_test() -> None:
    assert [name for name in PLATFORM_VARIABLES if name in os.environ] == []


def test_a_developers_platform_tokens_are_hidden_from_the_suite() -> None:
    env = {**os.environ, **{name: "123456:REAL-looking-token" for name in PLATFORM_VARIABLES}}
    nested = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{Path(__file__).relative_to(ROOT)}::test_no_platform_credential_reaches_a_test",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert nested.returncode == 0, nested.stdout[-3000:]
