"""The ``mnemogate`` command as an operator runs it: a fresh process of this interpreter with the test's
environment (the autouse ``_clean_env`` fixture has already taken out model keys and real homes), plus
``env``; bounded by ``timeout_s`` and never raising on a non-zero exit, so a test asserts on the result."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping


def mnemogate(
    *args: str, stdin: str = "", env: Mapping[str, str] | None = None, timeout_s: float = 120.0
) -> subprocess.CompletedProcess[str]:
    """Run ``mnemogate ARGS`` and return what it printed and its exit status."""
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, **(env or {})},
        check=False,
    )
