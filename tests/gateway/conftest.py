"""Shared by the gateway tests: a real state.db per test and a hand-driven wall clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core.storage.sqlite import StateStore
from gateway.storage.sqlite import open_state_store


class ManualClock:
    """A wall clock the test moves by hand (no sleeps)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def state(home: Path) -> AsyncIterator[StateStore]:
    async with open_state_store(home) as store:
        yield store
