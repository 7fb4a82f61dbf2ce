"""The SQLite backend assembled: state.db opened with both ladders, and one object holding every repository.

Invariants: every repository of one ``SqliteStorage`` shares its ``StateStore`` (one writer thread, one
reader pool), so a unit of work that one port method promises as one transaction is one ``run_write``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from agent_core.storage.sqlite import StateSettings, StateStore

from .schema import GATEWAY_LADDER

if TYPE_CHECKING:
    from .admin_reads import SqliteAdminReads
    from .checkpoints import SqliteCheckpoints
    from .jobs import SqliteTurnQueue
    from .outbox import SqliteOutbox
    from .pairing import SqlitePairing
    from .persons import SqliteIdentity


def open_state_store(home: Path, settings: StateSettings | None = None) -> StateStore:
    """A (not yet opened) store of ``home``'s state.db with the gateway's tables beside the agent's."""
    return StateStore(home, settings, ladders=(GATEWAY_LADDER,))


class SqliteStorage:
    """Every repository of the storage port over one opened ``StateStore``."""

    def __init__(self, state: StateStore) -> None:
        self.state = state

    # Imported on first use while the repositories move behind the port (each module owns its SQL).
    @functools.cached_property
    def queue(self) -> SqliteTurnQueue:
        from .jobs import SqliteTurnQueue

        return SqliteTurnQueue(self.state)

    @functools.cached_property
    def outbox(self) -> SqliteOutbox:
        from .outbox import SqliteOutbox

        return SqliteOutbox(self.state)

    @functools.cached_property
    def identity(self) -> SqliteIdentity:
        from .persons import SqliteIdentity

        return SqliteIdentity(self.state)

    @functools.cached_property
    def pairing(self) -> SqlitePairing:
        from .pairing import SqlitePairing

        return SqlitePairing(self.state)

    @functools.cached_property
    def checkpoints(self) -> SqliteCheckpoints:
        from .checkpoints import SqliteCheckpoints

        return SqliteCheckpoints(self.state)

    @functools.cached_property
    def admin(self) -> SqliteAdminReads:
        from .admin_reads import SqliteAdminReads

        return SqliteAdminReads(self.state)
