"""state.db's schema as ordered ladders of migrations (the agent's here, the gateway's beside its
repositories), each migration applied once under ``BEGIN IMMEDIATE``.

Invariants: each ladder's version table holds one row; a migration re-reads the version inside its own write
transaction and is skipped if another process already applied it, so any number of processes may open an
empty or old database at once; a database newer than this code is refused rather than guessed at.

A database of release 0.1 kept one shared ladder, whose ``schema_version`` also counted the other owners'
steps. Before any ladder moves it, the open — whichever ladders it holds — records that shared version in
``meta('shared_schema_version')``; a ladder with no version row of its own reads its legacy version from
there, so an open by the agent alone can never make the gateway skip its steps.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import StateUnavailableError
from .writer import WriteGate


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: the version it produces and the statements that produce it."""

    version: int
    name: str
    statements: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ladder:
    """One owner's migrations, in order, and the table that records how far they were applied.

    ``legacy_table``: a table whose presence, with no version table of this ladder, marks a database of
    the shared ladder (release 0.1), whose single version also counted this owner's steps.
    """

    owner: str
    version_table: str
    migrations: tuple[Migration, ...]
    legacy_table: str | None = None

    @property
    def latest(self) -> int:
        return self.migrations[-1].version


_CORE = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # A random identity lets the search sidecar notice it was built for a different state.db.
    "INSERT INTO meta(key, value) VALUES ('db_uuid', lower(hex(randomblob(16))))",
    """CREATE TABLE conversations (
        id TEXT PRIMARY KEY, session_key TEXT NOT NULL, person_id TEXT, platform TEXT, title TEXT,
        created_at REAL NOT NULL, ended_at REAL, end_reason TEXT, tip_session_id TEXT NOT NULL)""",
    # At most one live conversation per session key: the key -> conversation mapping is unambiguous.
    "CREATE UNIQUE INDEX conversations_live_key ON conversations(session_key) WHERE ended_at IS NULL",
    "CREATE INDEX conversations_key ON conversations(session_key, created_at)",
    "CREATE INDEX conversations_person ON conversations(person_id, created_at)",
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL REFERENCES conversations(id),
        parent_session_id TEXT REFERENCES sessions(id), session_key TEXT NOT NULL,
        person_id TEXT, platform TEXT, user_id TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT,
        display_name TEXT, system_prompt TEXT, model TEXT, title TEXT,
        started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0)""",
    "CREATE INDEX sessions_conversation ON sessions(conversation_id, started_at)",
    # The database itself refuses a second child of one segment: a compression chain cannot fork.
    """CREATE UNIQUE INDEX sessions_one_child ON sessions(parent_session_id)
        WHERE parent_session_id IS NOT NULL""",
    # AUTOINCREMENT: ids are never reused, so the search indexer's "indexed up to id N" stays truthful.
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
        conversation_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, tool_calls TEXT,
        tool_call_id TEXT, tool_name TEXT, reasoning TEXT, author TEXT, platform_message_id TEXT,
        api_content TEXT, created_at REAL NOT NULL)""",
    # One index serves both "a conversation's messages" and "a segment's messages" (a prefix of it).
    "CREATE INDEX messages_conversation ON messages(conversation_id, session_id, id)",
    """CREATE INDEX messages_platform_id ON messages(platform_message_id)
        WHERE platform_message_id IS NOT NULL""",
    """CREATE TABLE memory_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, person_id TEXT, conversation_id TEXT,
        actor TEXT NOT NULL, store TEXT NOT NULL, action TEXT NOT NULL, old_text TEXT, new_text TEXT)""",
    "CREATE INDEX memory_audit_person ON memory_audit(person_id, at)",
)

# "Conversations this person wrote in" (shared threads) for scoped search: an index seek, not a scan.
_SEARCH = (
    "CREATE INDEX IF NOT EXISTS messages_author ON messages(author, conversation_id) "
    "WHERE author IS NOT NULL AND role = 'user'",
)

# One row per model call (the segment counters only grow), so usage can be summed over a time range.
_USAGE_LOG = (
    """CREATE TABLE usage_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, session_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL)""",
    "CREATE INDEX usage_log_at ON usage_log(at)",
)

# Each call says which model and why, who caused it (person and platform copied from the conversation, so
# the row outlives the conversation's deletion) and its priced cost, NULL when the model has no price. SQLite
# cannot drop NOT NULL from a column, so the table is rebuilt; the old rows keep their ids, take their
# segment's model and their conversation's person and platform where those still exist, and their cost
# (always 0, never priced) becomes unknown.
_USAGE_ATTRIBUTION = (
    """CREATE TABLE usage_log_attributed (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, session_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, cost_usd REAL,
        model TEXT, kind TEXT NOT NULL DEFAULT 'turn', person_id TEXT, platform TEXT)""",
    """INSERT INTO usage_log_attributed(id, at, session_id, conversation_id, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, cost_usd, model, kind, person_id, platform)
        SELECT u.id, u.at, u.session_id, u.conversation_id, u.input_tokens, u.output_tokens,
            u.cache_read_tokens, u.cache_write_tokens, NULL, s.model, 'turn', c.person_id, c.platform
        FROM usage_log u LEFT JOIN sessions s ON s.id = u.session_id
            LEFT JOIN conversations c ON c.id = u.conversation_id""",
    "DROP TABLE usage_log",
    "ALTER TABLE usage_log_attributed RENAME TO usage_log",
    "CREATE INDEX usage_log_at ON usage_log(at)",
    "CREATE INDEX usage_log_person_at ON usage_log(person_id, at)",
)

# Retention (gateway.retention): large tool outputs by age, only those past the stub floor
# (agent_core.storage.tool_output_stubs.TOOL_OUTPUT_FLOOR_CHARS), so a stubbed output leaves the index;
# ended conversations by end time, for deleting them after the grace period.
_RETENTION = (
    "CREATE INDEX IF NOT EXISTS messages_large_tool_outputs ON messages(created_at) "
    "WHERE role = 'tool' AND length(content) > 1000",
    "CREATE INDEX IF NOT EXISTS conversations_ended ON conversations(ended_at) WHERE ended_at IS NOT NULL",
)

# Release 0.1 kept one ladder of 8 versions for every table of state.db; the agent's ladder keeps that
# ladder's table and numbers (its steps that only touched the gateway's tables are empty here), so such a
# database opens as it is. Step 9 (the usage log) takes the agent's ladder past the shared range, so release
# 0.1 no longer recognises a database this release has opened (its ``schema_version`` reads 9).
SHARED_LADDER_END = 8
# Where the shared ladder's version of a release-0.1 database is kept once this release may have moved it.
SHARED_VERSION_KEY = "shared_schema_version"
_GATEWAY_ONLY: tuple[str, ...] = ()

AGENT_LADDER = Ladder(
    owner="agent",
    version_table="schema_version",
    migrations=(
        Migration(1, "core: conversations, segments, messages, memory audit", _CORE),
        Migration(2, "(gateway tables: owned by the gateway's ladder)", _GATEWAY_ONLY),
        Migration(3, "(gateway tables: owned by the gateway's ladder)", _GATEWAY_ONLY),
        Migration(4, "(gateway tables: owned by the gateway's ladder)", _GATEWAY_ONLY),
        Migration(5, "search: index of user messages by author", _SEARCH),
        Migration(6, "(gateway tables: owned by the gateway's ladder)", _GATEWAY_ONLY),
        Migration(7, "(gateway tables: owned by the gateway's ladder)", _GATEWAY_ONLY),
        Migration(8, "(gateway tables: owned by the gateway's ladder)", _GATEWAY_ONLY),
        Migration(9, "usage: one row per model call, for usage over time", _USAGE_LOG),
        Migration(
            10, "usage: model, kind, person, platform and priced cost of each call", _USAGE_ATTRIBUTION
        ),
        Migration(11, "retention: large tool outputs by age, ended conversations by end", _RETENTION),
    ),
)
LATEST_VERSION = AGENT_LADDER.latest


def read_version(conn: sqlite3.Connection, ladder: Ladder) -> int:
    """How far ``ladder`` has been applied to this database; 0 for none of it."""
    if _has_table(conn, ladder.version_table):
        row = conn.execute(f"SELECT max(version) FROM {ladder.version_table}").fetchone()
        return int(row[0]) if row is not None and row[0] is not None else 0
    if ladder.legacy_table is not None and _has_table(conn, ladder.legacy_table):
        # A database of the shared ladder: its one version counted this owner's steps too.
        return shared_version(conn)
    return 0


def shared_version(conn: sqlite3.Connection) -> int:
    """The shared ladder's version of a release-0.1 database: as recorded before any ladder moved
    ``schema_version``, else ``schema_version`` itself, which then nothing has moved yet."""
    recorded = _recorded_shared_version(conn)
    if recorded is not None:
        return recorded
    return min(read_version(conn, AGENT_LADDER), SHARED_LADDER_END)


def refuse_newer(conn: sqlite3.Connection, db_path: Path, ladders: Sequence[Ladder]) -> None:
    """StateUnavailableError when any ladder is newer here than in this program, before any ladder migrates
    (so a database a newer release wrote is left exactly as it was)."""
    for ladder in ladders:
        version = read_version(conn, ladder)
        if version > ladder.latest:
            raise StateUnavailableError(
                db_path,
                f"{ladder.owner} schema version {version} is newer than this program supports "
                f"({ladder.latest})",
            )


def split_shared_ladder(gate: WriteGate, ladders: Sequence[Ladder]) -> None:
    """Record a release-0.1 database's shared version, and give each of ``ladders`` whose version still lives
    in it its own version row at that version.

    Must run before any ladder migrates: the agent's ladder keeps ``schema_version``, so once it advanced a
    0.1 database at version 2 to 8, the gateway would read 8 and never apply its steps 3, 4, 6, 7 and 8. An
    open by the agent alone cannot split (it does not know the other owners' tables), but it records the
    shared version before moving ``schema_version``, and the gateway's later split reads that record. A read
    decides first, so a database already split (or never shared) takes no write lock.
    """
    ladders = tuple(ladders)
    if _must_split(gate.connection, ladders):
        gate.run(functools.partial(_split, ladders=ladders))


def _must_split(conn: sqlite3.Connection, ladders: tuple[Ladder, ...]) -> bool:
    unsplit = any(_unsplit(conn, ladder) for ladder in ladders)
    return unsplit or (_shared_unrecorded(conn) and read_version(conn, AGENT_LADDER) < AGENT_LADDER.latest)


def _split(conn: sqlite3.Connection, ladders: tuple[Ladder, ...]) -> None:
    # Re-checked inside the write transaction: another process may have recorded or split since our read.
    if _shared_unrecorded(conn):
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?)", (SHARED_VERSION_KEY, str(shared_version(conn)))
        )
    for ladder in ladders:
        if _unsplit(conn, ladder):
            _record(conn, ladder, read_version(conn, ladder))


def _unsplit(conn: sqlite3.Connection, ladder: Ladder) -> bool:
    legacy = ladder.legacy_table
    return legacy is not None and not _has_table(conn, ladder.version_table) and _has_table(conn, legacy)


def _shared_unrecorded(conn: sqlite3.Connection) -> bool:
    """Whether ``schema_version`` may still count other owners' steps and nobody has written that down."""
    version = read_version(conn, AGENT_LADDER)
    in_shared_range = 1 <= version <= SHARED_LADDER_END and _has_table(conn, "meta")
    return in_shared_range and _recorded_shared_version(conn) is None


def _recorded_shared_version(conn: sqlite3.Connection) -> int | None:
    if not _has_table(conn, "meta"):
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (SHARED_VERSION_KEY,)).fetchone()
    return int(row[0]) if row is not None else None


def migrate(gate: WriteGate, db_path: Path, ladder: Ladder, target: int | None = None) -> int:
    """Bring ``ladder`` up to ``target`` (default: its latest) one migration per transaction."""
    refuse_newer(gate.connection, db_path, (ladder,))
    version = read_version(gate.connection, ladder)
    goal = ladder.latest if target is None else target
    for migration in ladder.migrations:
        if version < migration.version <= goal:
            version = gate.run(functools.partial(_apply, ladder=ladder, migration=migration))
    return version


def _apply(conn: sqlite3.Connection, ladder: Ladder, migration: Migration) -> int:
    # Re-check inside the write transaction: another process may have migrated since our read.
    current = read_version(conn, ladder)
    if current >= migration.version:
        return current
    for statement in migration.statements:
        conn.execute(statement)
    _record(conn, ladder, migration.version)
    return migration.version


def _record(conn: sqlite3.Connection, ladder: Ladder, version: int) -> None:
    conn.execute(f"CREATE TABLE IF NOT EXISTS {ladder.version_table} (version INTEGER NOT NULL)")
    conn.execute(f"DELETE FROM {ladder.version_table}")
    conn.execute(f"INSERT INTO {ladder.version_table}(version) VALUES (?)", (version,))


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return row is not None
