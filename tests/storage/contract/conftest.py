"""The contract suite's fixtures: each test runs once per backend in ``BACKEND_KINDS``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.storage.sqlite import SqliteStorage

from .backends import BACKEND_KINDS, BackendUnderTest, sqlite_backend


@pytest.fixture(params=BACKEND_KINDS)
def backend(request: pytest.FixtureRequest, home: Path) -> BackendUnderTest:
    assert request.param == "sqlite"
    return sqlite_backend(home)


@pytest.fixture
async def storage(backend: BackendUnderTest) -> AsyncIterator[SqliteStorage]:
    """An opened storage on an empty database of the test's backend."""
    async with backend.open() as opened:
        yield opened
