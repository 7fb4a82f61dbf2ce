"""state.db as release 0.1 left it: one shared ladder of 8 versions, recorded in one ``schema_version`` row.

``create_database(path, n)`` builds a 0.1-format database at version ``n`` the way release 0.1 migrated:
step ``k`` of both owners' ladders (the agent's and the gateway's, which today are split) applied in one
transaction for every ``k <= n``, then the single version row. ``load_dump(path)`` loads the dump of a home
that the real release 0.1 created (``data/state_0_1.sql``, see ``data/make_state_0_1.py``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent_core.storage.sqlite.schema import AGENT_LADDER, SHARED_LADDER_END
from gateway.storage.sqlite import GATEWAY_LADDER

DUMP = Path(__file__).parent / "data" / "state_0_1.sql"


def create_database(path: Path, version: int) -> None:
    """A fresh 0.1-format state.db at ``version`` (1..8), in WAL mode as 0.1 opened it."""
    assert 1 <= version <= SHARED_LADDER_END
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        for step in range(1, version + 1):
            conn.execute("BEGIN IMMEDIATE")
            for ladder in (AGENT_LADDER, GATEWAY_LADDER):
                (migration,) = (m for m in ladder.migrations if m.version == step)
                for statement in migration.statements:
                    conn.execute(statement)
            conn.execute("DELETE FROM schema_version")
            conn.execute("INSERT INTO schema_version(version) VALUES (?)", (step,))
            conn.execute("COMMIT")
    finally:
        conn.close()


def load_dump(path: Path) -> None:
    """A state.db holding exactly what the real release 0.1 wrote into ``data/state_0_1.sql``."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(DUMP.read_text(encoding="utf-8"))
    finally:
        conn.close()


def schema_of(path: Path) -> set[tuple[str, str, str]]:
    """(type, name, normalised SQL) of every table and index, to compare two databases' schemas."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    finally:
        conn.close()
    return {(kind, name, " ".join(sql.split())) for kind, name, sql in rows}


def versions_of(path: Path) -> dict[str, int | None]:
    """Each version table's single value (None when the table is absent); asserts one row each."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found: dict[str, int | None] = {}
        for table in ("schema_version", "gateway_schema_version"):
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
            if exists.fetchone() is None:
                found[table] = None
                continue
            rows = conn.execute(f"SELECT version FROM {table}").fetchall()
            assert len(rows) == 1, (table, rows)
            found[table] = int(rows[0][0])
    finally:
        conn.close()
    return found
