"""The contract suite's fixtures: each test runs once per backend in ``BACKEND_KINDS``, on the port only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.storage import Storage

from .backends import BACKEND_KINDS, BackendUnderTest, backend_for


@pytest.fixture(params=BACKEND_KINDS)
def backend(request: pytest.FixtureRequest, home: Path) -> BackendUnderTest:
    if request.param == "postgres":
        request.getfixturevalue("postgres_database")  # skips, or fails when required, without a server
    return backend_for(request.param, home)


@pytest.fixture
async def storage(backend: BackendUnderTest) -> AsyncIterator[Storage]:
    """An opened storage on an empty database of the test's backend."""
    async with backend.open() as opened:
        yield opened
