"""The backends the contract suite runs on, each opened from a spec string a child process can receive too.

Every backend opens through ``gateway.storage.open_storage`` (the factory the gateway uses), so adding one
is one ``BackendKind`` in ``BACKENDS``; ``postgres`` puts each test home in a schema of its own in the
run's throwaway database (tests/postgres_server.py); every contract test runs on each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_core.storage.search_windows import Embedder
from gateway.config import StorageSettings
from gateway.storage import Storage
from gateway.storage import open_storage as open_configured_storage
from tests import postgres_server


@dataclass(frozen=True, slots=True)
class BackendKind:
    """One backend under test: the ``storage`` settings that select it for a test's home directory."""

    name: str
    settings: Callable[[Path], StorageSettings]


BACKENDS: dict[str, BackendKind] = {
    "sqlite": BackendKind("sqlite", lambda home: StorageSettings(backend="sqlite")),
    "postgres": BackendKind("postgres", postgres_server.storage_settings),
}
BACKEND_KINDS = tuple(BACKENDS)


@dataclass(frozen=True, slots=True)
class BackendUnderTest:
    """Where one test's data lives; ``open()`` gives a fresh handle on it (another process, a restart)."""

    kind: str
    spec: str

    def open(self, *, embedder: Embedder | None = None) -> contextlib.AbstractAsyncContextManager[Storage]:
        """A handle on the data; ``embedder``: the model that embeds its search windows (None: none)."""
        return open_storage(self.spec, embedder=embedder)


def open_storage(
    spec: str, *, embedder: Embedder | None = None
) -> contextlib.AbstractAsyncContextManager[Storage]:
    """Open the storage a spec names (``<kind>:<home directory>``); usable from a spawned process."""
    kind, _, where = spec.partition(":")
    if kind not in BACKENDS or not where:
        raise ValueError(f"unknown backend spec {spec!r}; kinds: {', '.join(BACKEND_KINDS)}")
    home = Path(where)
    return open_configured_storage(home, BACKENDS[kind].settings(home), embedder=embedder)


def backend_for(kind: str, home: Path) -> BackendUnderTest:
    """The backend ``kind`` with its data for ``home``."""
    return BackendUnderTest(kind, f"{kind}:{home}")


def sqlite_backend(home: Path) -> BackendUnderTest:
    return backend_for("sqlite", home)
