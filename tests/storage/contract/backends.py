"""The backends the contract suite runs on, each opened from a spec string a child process can receive too.

Add a backend by adding one ``BackendKind`` here (the PostgreSQL issue adds ``postgres``); every contract
test then runs on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from agent_core.storage.sqlite import StateSettings
from gateway.storage.sqlite import SqliteStorage, open_state_store


@dataclass(frozen=True, slots=True)
class BackendUnderTest:
    """Where one test's data lives; ``open()`` gives a fresh handle on it (another process, a restart)."""

    kind: str
    spec: str

    def open(
        self, settings: StateSettings | None = None
    ) -> contextlib.AbstractAsyncContextManager[SqliteStorage]:
        return open_storage(self.spec, settings)


@contextlib.asynccontextmanager
async def open_storage(spec: str, settings: StateSettings | None = None) -> AsyncIterator[SqliteStorage]:
    """Open the storage a spec names (``sqlite:<home directory>``); usable from a spawned process."""
    kind, _, where = spec.partition(":")
    if kind != "sqlite":
        raise ValueError(f"unknown backend spec {spec!r}")
    async with open_state_store(Path(where), settings) as state:
        yield SqliteStorage(state)


def sqlite_backend(home: Path) -> BackendUnderTest:
    return BackendUnderTest("sqlite", f"sqlite:{home}")


BACKEND_KINDS = ("sqlite",)
