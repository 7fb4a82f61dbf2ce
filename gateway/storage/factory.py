"""``open_storage``: the one place that maps ``storage.backend`` to a backend package and opens it.

Invariants: the backend named in the settings is the only one imported (lazily, so a deployment never
loads a driver it does not use); an unknown name is a ``ValueError`` naming the known ones; the opened
``Storage`` is closed when the context exits. The PostgreSQL issue adds one branch here.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from agent_core.storage.search_windows import Embedder

from .backend import Storage

if TYPE_CHECKING:  # the config package imports components that import this port: no import at run time
    from gateway.config.storage import StorageSettings


@contextlib.asynccontextmanager
async def open_storage(
    home: Path,
    settings: StorageSettings,
    *,
    facts_file: str | None = None,
    embedder: Embedder | None = None,
) -> AsyncIterator[Storage]:
    """The storage ``settings.backend`` names, opened (created or migrated) for ``home``.

    ``facts_file``: the local provider's fact file relative to ``home``, for a backend that keeps facts in
    a file of their own (SQLite; None: its default); a backend that keeps them in its database ignores it.
    ``embedder``: the model that gives search windows their vectors in the background (None: the windows
    are kept for lexical ranking, and search is lexical only).
    """
    if settings.backend == "sqlite":
        from agent_core.storage.sqlite.fact_store import SqliteFactStore

        from .sqlite.backend import DEFAULT_FACTS_FILE, SqliteStorage, open_state_store

        facts = SqliteFactStore(home / (facts_file or DEFAULT_FACTS_FILE))
        async with open_state_store(home, settings.sqlite, embedder=embedder) as state:
            yield SqliteStorage(state, facts=facts, home=home)
        return
    if settings.backend == "postgres":
        from .postgres.backend import open_postgres_storage

        async with open_postgres_storage(settings.postgres, embedder=embedder) as storage:
            yield storage
        return
    from gateway.config.storage import STORAGE_BACKENDS

    raise ValueError(
        f"storage.backend {settings.backend!r} has no backend here; known: {', '.join(STORAGE_BACKENDS)}"
    )
