"""Shared fixtures: an isolated home directory per test, and an environment free of real API keys."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.adapters_config import ADAPTER_CREDENTIALS

from . import postgres_server

_LEAKY_ENV = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "HONCHO_API_KEY",
    "MEM0_API_KEY",
    "MNEMOGATE_HOME",
    "DATABASE_URL",
    "MNEMOGATE_STORAGE__BACKEND",
    "MNEMOGATE_STORAGE__POSTGRES__DSN",
    # A platform token alone switches its adapter on: a developer's real bot must not serve the tests.
    *(source.variable for sources in ADAPTER_CREDENTIALS.values() for source in sources),
)

# The mem0 SDK reports telemetry to the internet when imported unless told not to; tests touch 127.0.0.1 only.
os.environ["MEM0_TELEMETRY"] = "false"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test talks to a real provider or a developer's real home by accident."""
    for name in _LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture(autouse=True)
def _no_leftover_processes() -> Iterator[None]:
    """A test stops every process it spawned: one left running would keep pytest from ever exiting
    (multiprocessing joins its children at exit), so it is killed here and the test fails."""
    yield
    leftovers = multiprocessing.active_children()
    for child in leftovers:
        child.kill()
        child.join(5)
    assert not leftovers, f"the test left spawned processes running: {leftovers}"


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """This run's throwaway PostgreSQL database (its DSN); skips or fails when there is no server."""
    yield from postgres_server.throwaway_database()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    root.mkdir()
    return root
