"""state.db's schema as an ordered list of migrations, each applied once under ``BEGIN IMMEDIATE``.

Invariants: ``schema_version`` holds one row; a migration re-reads the version inside its own write
transaction and is skipped if another process already applied it, so any number of processes may open an
empty or old database at once; a database newer than this code is refused rather than guessed at.
"""

from __future__ import annotations

import functools
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .errors import StateUnavailableError
from .writer import WriteGate


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: the version it produces and the statements that produce it."""

    version: int
    name: str
    statements: tuple[str, ...]


_CORE = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # A random identity lets the search sidecar notice it was built for a different state.db.
    "INSERT INTO meta(key, value) VALUES ('db_uuid', lower(hex(randomblob(16))))",
    "CREATE TABLE persons (id TEXT PRIMARY KEY, display_name TEXT, created_at REAL NOT NULL)",
    """CREATE TABLE accounts (
        platform TEXT NOT NULL, account_id TEXT NOT NULL,
        person_id TEXT NOT NULL REFERENCES persons(id), created_at REAL NOT NULL,
        PRIMARY KEY (platform, account_id)) WITHOUT ROWID""",
    "CREATE INDEX accounts_person ON accounts(person_id)",
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

_GATEWAY = (
    """CREATE TABLE inbound_events (
        platform TEXT NOT NULL, event_id TEXT NOT NULL, conversation_id TEXT, received_at REAL NOT NULL,
        PRIMARY KEY (platform, event_id)) WITHOUT ROWID""",
    """CREATE TABLE turn_jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, claimed_by TEXT,
        started_at REAL, finished_at REAL, error TEXT)""",
    "CREATE INDEX turn_jobs_pending ON turn_jobs(state, conversation_id, id)",
    """CREATE TABLE leases (
        conversation_id TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL)""",
    """CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL, chat_ref TEXT NOT NULL,
        chunk_index INTEGER NOT NULL DEFAULT 0, idempotency_key TEXT NOT NULL UNIQUE, text TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0, platform_message_id TEXT, created_at REAL NOT NULL,
        sent_at REAL, error TEXT)""",
    "CREATE INDEX outbox_pending ON outbox(state, id)",
)

_IDENTITY = (
    # A link code lets a second platform account join the person that issued it: single use, short-lived.
    """CREATE TABLE link_codes (
        code TEXT PRIMARY KEY, person_id TEXT NOT NULL REFERENCES persons(id), created_at REAL NOT NULL,
        expires_at REAL NOT NULL, used_at REAL, used_by TEXT) WITHOUT ROWID""",
    "CREATE INDEX link_codes_person ON link_codes(person_id, created_at)",
    # One pairing request per platform account, ever: re-sending returns it; a decision changes its state.
    """CREATE TABLE pairing_requests (
        code TEXT PRIMARY KEY, platform TEXT NOT NULL, account_id TEXT NOT NULL, display_name TEXT,
        created_at REAL NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'denied')),
        decided_at REAL, decided_by TEXT, UNIQUE (platform, account_id)) WITHOUT ROWID""",
    "CREATE INDEX pairing_requests_recent ON pairing_requests(platform, created_at)",
    "CREATE INDEX pairing_requests_state ON pairing_requests(state, created_at)",
    # When a refused account was last told so, per kind of notice, so refusals never become spam.
    """CREATE TABLE access_notices (
        platform TEXT NOT NULL, account_id TEXT NOT NULL, kind TEXT NOT NULL, sent_at REAL NOT NULL,
        PRIMARY KEY (platform, account_id, kind)) WITHOUT ROWID""",
)

# Who a job runs for and where its reply goes; the interrupt flag (1 = newer messages, 2 = /stop) that the
# running worker reads at its next safe point; per-chunk delivery progress so a resend skips sent chunks.
_GATEWAY_QUEUE = (
    "ALTER TABLE inbound_events ADD COLUMN kind TEXT",
    "ALTER TABLE turn_jobs ADD COLUMN person_id TEXT",
    "ALTER TABLE turn_jobs ADD COLUMN is_admin INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE turn_jobs ADD COLUMN platform TEXT",
    "ALTER TABLE turn_jobs ADD COLUMN chat_ref TEXT",
    "ALTER TABLE turn_jobs ADD COLUMN reply_to TEXT",
    "ALTER TABLE turn_jobs ADD COLUMN interrupt INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX turn_jobs_conversation ON turn_jobs(conversation_id, state)",
    "ALTER TABLE outbox ADD COLUMN platform TEXT",
    "ALTER TABLE outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'reply'",
    "ALTER TABLE outbox ADD COLUMN job_id INTEGER",
    "ALTER TABLE outbox ADD COLUMN message_id INTEGER",
    "ALTER TABLE outbox ADD COLUMN reply_to TEXT",
    "ALTER TABLE outbox ADD COLUMN claimed_by TEXT",
    "ALTER TABLE outbox ADD COLUMN claim_expires_at REAL",
    "CREATE INDEX outbox_platform_state ON outbox(platform, state, id)",
    "CREATE INDEX outbox_chat ON outbox(chat_ref, state, id)",
    "CREATE INDEX outbox_message ON outbox(message_id) WHERE message_id IS NOT NULL",
    """CREATE TABLE outbox_chunks (
        outbox_id INTEGER NOT NULL, chunk_index INTEGER NOT NULL, platform_message_id TEXT,
        sent_at REAL NOT NULL, PRIMARY KEY (outbox_id, chunk_index)) WITHOUT ROWID""",
    # Messages that arrived while a turn ran wait here (durably) and join the transcript when the next
    # turn is claimed, so they sit after the running turn's reply instead of before it.
    """CREATE TABLE pending_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL, job_id INTEGER NOT NULL,
        role TEXT NOT NULL, content TEXT, author TEXT, platform_message_id TEXT, created_at REAL NOT NULL)""",
    "CREATE INDEX pending_messages_conversation ON pending_messages(conversation_id, id)",
)

# "Conversations this person wrote in" (shared threads) for scoped search: an index seek, not a scan.
_SEARCH = (
    "CREATE INDEX IF NOT EXISTS messages_author ON messages(author, conversation_id) "
    "WHERE author IS NOT NULL AND role = 'user'",
)

# Positions adapters keep across restarts (e.g. Discord: the newest message handled per channel).
_CHECKPOINTS = (
    """CREATE TABLE adapter_checkpoints (
        platform TEXT NOT NULL, key TEXT NOT NULL, position INTEGER NOT NULL, updated_at REAL NOT NULL,
        PRIMARY KEY (platform, key)) WITHOUT ROWID""",
)

# A chat window's history shows the command replies and notices sent to that chat. (This index never
# existed: migration 4 already has an ``outbox_chat`` — (chat_ref, state, id), which the claim query needs —
# so IF NOT EXISTS skipped it. Migration 8 creates it under its own name; this step is kept as it shipped.)
_CHAT_NOTICES = ("CREATE INDEX IF NOT EXISTS outbox_chat ON outbox(chat_ref, id)",)

# The newest rows of one chat, newest first, without a sort (the history read); delivered rows by age, so
# pruning them is an index range, not a scan of everything kept.
_OUTBOX_READS = (
    "CREATE INDEX IF NOT EXISTS outbox_chat_history ON outbox(chat_ref, id)",
    "CREATE INDEX IF NOT EXISTS outbox_sent_at ON outbox(sent_at) WHERE state = 'sent'",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "core: conversations, segments, messages, persons, memory audit", _CORE),
    Migration(2, "gateway: inbound ledger, turn jobs, leases, outbox", _GATEWAY),
    Migration(3, "identity: link codes, pairing requests, access notices", _IDENTITY),
    Migration(4, "gateway queue: job routing, interrupt flag, outbox claims, chunk progress", _GATEWAY_QUEUE),
    Migration(5, "search: index of user messages by author", _SEARCH),
    Migration(6, "adapters: checkpoints kept across restarts", _CHECKPOINTS),
    Migration(7, "outbox: rows of one chat, for chat windows' history", _CHAT_NOTICES),
    Migration(8, "outbox: chat history index under its own name; delivered rows by age", _OUTBOX_READS),
)
LATEST_VERSION = MIGRATIONS[-1].version


def read_version(conn: sqlite3.Connection) -> int:
    """The schema version recorded in the database; 0 for an empty database."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def migrate(gate: WriteGate, db_path: Path, target: int = LATEST_VERSION) -> int:
    """Bring the database up to ``target`` one migration per transaction; return the resulting version."""
    version = read_version(gate.connection)
    if version > LATEST_VERSION:
        raise StateUnavailableError(
            db_path, f"schema version {version} is newer than this program supports ({LATEST_VERSION})"
        )
    for migration in MIGRATIONS:
        if version < migration.version <= target:
            version = gate.run(functools.partial(_apply, migration=migration))
    return version


def _apply(conn: sqlite3.Connection, migration: Migration) -> int:
    # Re-check inside the write transaction: another process may have migrated since our read.
    current = read_version(conn)
    if current >= migration.version:
        return current
    for statement in migration.statements:
        conn.execute(statement)
    conn.execute("DELETE FROM schema_version")
    conn.execute("INSERT INTO schema_version(version) VALUES (?)", (migration.version,))
    return migration.version
