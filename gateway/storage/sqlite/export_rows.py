"""A SQLite home read for a move to another backend: every table of state.db (and the local provider's fact
file) as rows in the PostgreSQL naming, and its memory files and skills through their ports.

Invariants: the home is held exclusively for as long as it is open (``exclusive_home``: the write and
indexer flocks, and no process with state.db open), so nothing changes between the reads that digest a
table and the reads that copy it; nothing is ever written — the databases are opened read-only (immutable
when no write-ahead log holds anything, so not even a ``-shm`` file appears); only a state.db at this
program's schema versions is read (an older one is migrated by opening it once on SQLite first); every table
of state.db is either copied or named below as not copied, so a table this module does not know is an error
rather than data silently left behind. Names map as the two schemas differ: ``sessions`` → ``segments``,
``*session_id`` → ``*segment_id``, ``turn_jobs.is_admin`` 0/1 → boolean, and the compression cooldowns kept
as JSON in ``meta`` → rows of ``compression_cooldowns``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from agent_core.memory.filestore import FileMemoryDocuments
from agent_core.skills.skill_files import SkillFiles
from agent_core.storage.cooldowns import CompressionCooldown
from agent_core.storage.documents import MemoryDocuments, SkillTexts
from agent_core.storage.sqlite.backup import exclusive_home
from agent_core.storage.sqlite.schema import AGENT_LADDER, Ladder, read_version
from agent_core.storage.sqlite.settings import StateSettings
from gateway.storage.client_keys import KEY_BYTES
from gateway.storage.home_move import HomeMoveError, Row, TableShape

from .client_key_file import KEY_FILENAME
from .schema import GATEWAY_LADDER

# (state.db table, PostgreSQL table), each after the tables it references.
TABLES: tuple[tuple[str, str], ...] = (
    ("conversations", "conversations"),
    ("sessions", "segments"),
    ("messages", "messages"),
    ("memory_audit", "memory_audit"),
    ("usage_log", "usage_log"),
    ("persons", "persons"),
    ("accounts", "accounts"),
    ("link_codes", "link_codes"),
    ("pairing_requests", "pairing_requests"),
    ("access_notices", "access_notices"),
    ("inbound_events", "inbound_events"),
    ("turn_jobs", "turn_jobs"),
    ("leases", "leases"),
    ("pending_messages", "pending_messages"),
    ("outbox", "outbox"),
    ("outbox_chunks", "outbox_chunks"),
    ("adapter_checkpoints", "adapter_checkpoints"),
    ("adapter_leases", "adapter_leases"),
    ("schedules", "schedules"),
    ("schedule_runs", "schedule_runs"),
    ("person_timezones", "person_timezones"),
    ("budget_notices", "budget_notices"),
    ("budget_refusals", "budget_refusals"),
    ("budget_slots", "budget_slots"),
    ("budget_watermarks", "budget_watermarks"),
    ("retention_totals", "retention_totals"),
)
# Version tables belong to each database's own ladders; ``meta`` holds state.db's identity and the shared
# version of release 0.1 (the target has its own) besides the cooldowns, which are copied as rows;
# ``retention_run`` is the retention run's lease and last finish in this database's clock (the target's
# first run starts afresh).
NOT_COPIED = frozenset(
    {"schema_version", "gateway_schema_version", "meta", "sqlite_sequence", "retention_run"}
)
COLUMNS = {
    "session_id": "segment_id",
    "parent_session_id": "parent_segment_id",
    "tip_session_id": "tip_segment_id",
}
COLUMNS_BACK = {pg: sqlite for sqlite, pg in COLUMNS.items()}
BOOLEANS = frozenset({("turn_jobs", "is_admin"), ("schedules", "is_admin")})

COOLDOWNS = TableShape(
    "compression_cooldowns",
    ("conversation_id", "segment_id", "until", "after_message_id", "turns", "kind", "reason", "notified"),
    ("conversation_id",),
)
FACTS = TableShape("facts", ("id", "person_id", "content", "source", "created_at"), ("id",))
_COOLDOWN_PREFIX = "compression.cooldown/"  # agent_core/storage/sqlite/cooldowns.py keeps them under it
_COOLDOWN_END = _COOLDOWN_PREFIX[:-1] + chr(ord(_COOLDOWN_PREFIX[-1]) + 1)
# Parents first: a segment's row must exist before its continuation's (the target checks the reference).
_SEGMENTS_PARENTS_FIRST = """WITH RECURSIVE chain(id, depth) AS (
        SELECT id, 0 FROM sessions WHERE parent_session_id IS NULL
        UNION ALL SELECT s.id, chain.depth + 1 FROM sessions s JOIN chain ON s.parent_session_id = chain.id)
    SELECT {columns} FROM sessions s LEFT JOIN chain ON chain.id = s.id
    ORDER BY coalesce(chain.depth, -1), s.id"""


@contextlib.contextmanager
def open_home_rows(home: Path, settings: StateSettings, *, facts_file: Path) -> Iterator[SqliteHomeRows]:
    """``home`` held exclusively and opened read-only (``HomeInUseError`` while any process has it open)."""
    db = home / settings.db_filename
    if not db.is_file():
        raise HomeMoveError(f"{home} holds no {settings.db_filename}: there is nothing to migrate")
    with exclusive_home(home, settings), contextlib.ExitStack() as stack:
        state = _read_only(db)
        stack.callback(state.close)
        _check_versions(state, db)
        facts = None
        if facts_file.is_file():
            facts = _read_only(facts_file)
            stack.callback(facts.close)
        yield SqliteHomeRows(home, db, state, facts, facts_file)


class SqliteHomeRows:
    """A held home's tables in the PostgreSQL naming (``gateway.storage.home_move.HomeSource``)."""

    def __init__(
        self,
        home: Path,
        db: Path,
        state: sqlite3.Connection,
        facts: sqlite3.Connection | None,
        facts_file: Path,
    ) -> None:
        self.home = home
        self._db = db
        self._state = state
        self._facts = facts
        self._facts_file = facts_file
        self._documents = FileMemoryDocuments(home / "memories")
        self._skills = SkillFiles(home / "skills")
        self._sources = self._map_tables()
        self._cooldowns, self._unreadable_cooldowns = self._read_cooldowns()

    @property
    def where(self) -> str:
        return str(self.home)

    @property
    def documents(self) -> MemoryDocuments:
        return self._documents

    @property
    def skills(self) -> SkillTexts:
        return self._skills

    def files(self) -> tuple[str, ...]:
        """The files and folders the move reads (relative to the home where they are inside it)."""
        found = [self._db, self._facts_file, self.home / "memories", self.home / "skills", self._key_file]
        return tuple(_relative(path, self.home) for path in found if path.exists())

    def shapes(self) -> tuple[TableShape, ...]:
        tables = tuple(shape for shape, _ in self._sources.values())
        return (*tables, COOLDOWNS, FACTS)

    def rows(self, shape: TableShape) -> Iterator[Row]:
        if shape == COOLDOWNS:
            return iter(self._cooldowns)
        if shape == FACTS:
            return self._fact_rows()
        order = ", ".join(_quoted(COLUMNS_BACK.get(k, k)) for k in shape.key)
        query = f"SELECT {_select_list(shape)} FROM {_quoted(self._sources[shape.name][1])} ORDER BY {order}"
        return self._converted(shape, query)

    def insert_rows(self, shape: TableShape) -> Iterator[Row]:
        if shape.name != "segments":
            return self.rows(shape)
        return self._converted(shape, _SEGMENTS_PARENTS_FIRST.format(columns=_select_list(shape, "s.")))

    @property
    def _key_file(self) -> Path:
        return self.home / KEY_FILENAME

    def client_key(self) -> bytes | None:
        if not self._key_file.exists():
            return None
        try:
            key = self._key_file.read_bytes()
        except OSError as exc:
            raise HomeMoveError(f"{self._key_file}: cannot read the client key ({exc.strerror})") from exc
        if len(key) != KEY_BYTES:
            raise HomeMoveError(f"{self._key_file} is damaged ({len(key)} bytes, expected {KEY_BYTES})")
        return key

    def notes(self) -> tuple[str, ...]:
        notes = []
        if self._unreadable_cooldowns:
            notes.append(
                f"{self._unreadable_cooldowns} unreadable compression cooldown record(s) in meta not copied "
                "(an unreadable cooldown reads as none)"
            )
        if (self.home / "skills" / ".deleted").is_dir():
            notes.append("skills/.deleted/ (deleted skills kept for recovery) stays in the home, not copied")
        return tuple(notes)

    def _map_tables(self) -> dict[str, tuple[TableShape, str]]:
        """PostgreSQL table -> (its shape, the state.db table it comes from), for every table present."""
        present = [
            str(row[0])
            for row in self._state.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        known = {sqlite_name for sqlite_name, _ in TABLES}
        unknown = [
            n for n in present if n not in known and n not in NOT_COPIED and not n.startswith("sqlite_")
        ]
        if unknown:
            raise HomeMoveError(
                f"{self._db} has tables this mnemogate cannot migrate ({', '.join(unknown)}); "
                "run migrate with the release that created them"
            )
        mapped: dict[str, tuple[TableShape, str]] = {}
        for sqlite_name, pg_name in TABLES:
            if sqlite_name in present:
                mapped[pg_name] = (_shape(self._state, sqlite_name, pg_name), sqlite_name)
        return mapped

    def _converted(self, shape: TableShape, query: str) -> Iterator[Row]:
        """The rows ``query`` reads from state.db, booleans as booleans; a read error is a HomeMoveError."""
        flags = tuple((shape.name, c) in BOOLEANS for c in shape.columns)
        try:
            for row in self._state.execute(query):
                yield tuple(
                    bool(v) if flag and v is not None else v for v, flag in zip(row, flags, strict=True)
                )
        except sqlite3.Error as exc:
            raise HomeMoveError(f"{self._db} cannot be read ({shape.name}): {exc}") from exc

    def _read_cooldowns(self) -> tuple[tuple[Row, ...], int]:
        rows: list[Row] = []
        unreadable = 0
        found = self._state.execute(
            "SELECT key, value FROM meta WHERE key >= ? AND key < ? ORDER BY key",
            (_COOLDOWN_PREFIX, _COOLDOWN_END),
        )
        for key, value in found:
            try:
                record = CompressionCooldown(**json.loads(str(value)))
                row: Row = (
                    str(key)[len(_COOLDOWN_PREFIX) :],
                    str(record.segment_id),
                    float(record.until),
                    int(record.after_message_id),
                    int(record.turns),
                    str(record.kind),
                    str(record.reason),
                    bool(record.notified),
                )
            except (TypeError, ValueError):
                unreadable += 1
                continue
            rows.append(row)
        return tuple(rows), unreadable

    def _fact_rows(self) -> Iterator[Row]:
        if self._facts is None or not _has_table(self._facts, "facts"):
            return iter(())
        columns = ", ".join(_quoted(c) for c in FACTS.columns)
        return (tuple(row) for row in self._facts.execute(f"SELECT {columns} FROM facts ORDER BY id"))


def _select_list(shape: TableShape, prefix: str = "") -> str:
    """The state.db columns that give ``shape``'s columns, in its order."""
    return ", ".join(prefix + _quoted(COLUMNS_BACK.get(c, c)) for c in shape.columns)


def _shape(conn: sqlite3.Connection, sqlite_table: str, pg_table: str) -> TableShape:
    info = conn.execute(f"PRAGMA table_info({_quoted(sqlite_table)})").fetchall()
    columns = tuple(COLUMNS.get(str(row[1]), str(row[1])) for row in info)
    keyed = sorted((int(row[5]), COLUMNS.get(str(row[1]), str(row[1]))) for row in info if int(row[5]) > 0)
    key = tuple(name for _, name in keyed) or columns
    return TableShape(pg_table, columns, key)


def _check_versions(conn: sqlite3.Connection, db: Path) -> None:
    """HomeMoveError unless both ladders of state.db are exactly at this program's versions."""
    for ladder in (AGENT_LADDER, GATEWAY_LADDER):
        version = read_version(conn, ladder)
        if version == ladder.latest:
            continue
        raise HomeMoveError(_version_problem(db, ladder, version))


def _version_problem(db: Path, ladder: Ladder, version: int) -> str:
    where = f"{db} is at {ladder.owner} schema version {version}, this mnemogate at {ladder.latest}"
    if version > ladder.latest:
        return f"{where}: run migrate with the release that wrote it"
    return (
        f"{where}: open the home once with this mnemogate on SQLite (for example `mnemogate sessions`) so it "
        "migrates, stop it, then run migrate again"
    )


def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; immutable when no write-ahead log holds anything, so nothing is created."""
    wal = path.with_name(path.name + "-wal")
    has_log = wal.is_file() and wal.stat().st_size > 0
    mode = "mode=ro" if has_log else "immutable=1"
    try:
        return sqlite3.connect(f"file:{quote(str(path))}?{mode}", uri=True, check_same_thread=True)
    except sqlite3.Error as exc:
        raise HomeMoveError(f"{path} cannot be opened: {exc}") from exc


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return found is not None


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _relative(path: Path, home: Path) -> str:
    try:
        relative = path.relative_to(home).as_posix()
    except ValueError:
        return str(path)
    return relative + "/" if path.is_dir() else relative
