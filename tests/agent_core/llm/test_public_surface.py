"""The declared public surface of agent_core.llm and its fakes resolves, and stays SDK-free."""

from __future__ import annotations

import subprocess
import sys

import agent_core.llm
import agent_core.llm.fakes


def test_every_exported_name_exists() -> None:
    for package in (agent_core.llm, agent_core.llm.fakes):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
        assert sorted(package.__all__) == sorted(set(package.__all__))


def test_importing_the_package_does_not_import_the_provider_sdks() -> None:
    # The offline path (make run without a key) must not pay the SDKs' multi-second import.
    code = "import sys, agent_core.llm; print('anthropic' in sys.modules, 'openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]
