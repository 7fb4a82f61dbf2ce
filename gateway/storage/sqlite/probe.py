"""What ``check-config --connect`` learns about state.db: whether it exists and each ladder's version there.

Invariants: the file is opened read-only (``mode=ro``: never created, migrated or written, so a running
gateway is undisturbed) and closed before returning; an unreadable file is a ``StateUnavailableError``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from agent_core.storage.errors import StateUnavailableError
from agent_core.storage.sqlite.schema import AGENT_LADDER, Ladder, read_version

from .schema import GATEWAY_LADDER

LADDERS: tuple[Ladder, ...] = (AGENT_LADDER, GATEWAY_LADDER)


def state_versions(db: Path, ladders: Sequence[Ladder] = LADDERS) -> dict[str, int] | None:
    """Each ladder's version in ``db`` by owner; None when the file does not exist (yet)."""
    if not db.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro", uri=True, timeout=5.0)
        try:
            return {ladder.owner: read_version(conn, ladder) for ladder in ladders}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StateUnavailableError(
            db, f"cannot be read ({exc})", damaged="not a database" in str(exc)
        ) from exc


def latest_versions(ladders: Sequence[Ladder] = LADDERS) -> dict[str, int]:
    """This program's version of each ladder by owner."""
    return {ladder.owner: ladder.latest for ladder in ladders}
