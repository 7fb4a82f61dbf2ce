"""The PostgreSQL schema as ordered ladders of migrations (the agent's here, the gateway's beside its
repositories), applied by whichever process opens the database first, under one advisory lock.

Invariants: every ladder keeps one version row in its own table inside the configured schema, numbered
like SQLite's (each ladder counts its own steps from 1); all migrations of one open run in one transaction
holding ``pg_advisory_xact_lock(SCHEMA_LOCK)``, so any number of hosts may start on an empty or old database
at once and exactly one applies each step while the others wait and then find nothing to do (PostgreSQL's
DDL is transactional: a crash mid-migration leaves the previous version whole); a database whose version
is newer than this program is refused before anything is written. Timestamps are epoch seconds from
``mg_now()``: the server's clock, so leases agree across hosts whatever their own clocks say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import LiteralString

from .engine import Conn, PgDatabase, PostgresUnavailableError
from .fact_store import FACTS_DDL
from .memory_documents import MEMORY_DDL
from .messages import APPEND_DDL, USAGE_ATTRIBUTION_APPEND_DDL, USAGE_LOG_APPEND_DDL
from .search_ddl import SEARCH_DDL
from .tool_output_stubs import RETENTION_DDL
from .window_builder import WINDOW_DDL

SCHEMA_LOCK = 0x6D6E656D6F  # "mnemo": one advisory lock for every mnemogate migration in a database


@dataclass(frozen=True, slots=True)
class PgMigration:
    """One schema step: the version it produces and the statements that produce it."""

    version: int
    name: str
    statements: tuple[LiteralString, ...]


@dataclass(frozen=True, slots=True)
class PgLadder:
    """One owner's migrations, in order, and the table recording how far they were applied."""

    owner: str
    version_table: LiteralString
    migrations: tuple[PgMigration, ...]

    @property
    def latest(self) -> int:
        return self.migrations[-1].version


_CORE: tuple[LiteralString, ...] = (
    """CREATE OR REPLACE FUNCTION mg_now() RETURNS double precision LANGUAGE sql VOLATILE
        AS $$ SELECT extract(epoch FROM clock_timestamp())::double precision $$""",
    "CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)",
    "INSERT INTO meta(key, value) VALUES ('db_uuid', md5(random()::text || clock_timestamp()::text))",
    """CREATE TABLE conversations (
        id text PRIMARY KEY, session_key text NOT NULL, person_id text, platform text, title text,
        created_at double precision NOT NULL, ended_at double precision, end_reason text,
        tip_segment_id text NOT NULL)""",
    # At most one live conversation per session key: the key -> conversation mapping is unambiguous.
    "CREATE UNIQUE INDEX conversations_live_key ON conversations(session_key) WHERE ended_at IS NULL",
    "CREATE INDEX conversations_key ON conversations(session_key, created_at)",
    "CREATE INDEX conversations_person ON conversations(person_id, created_at)",
    """CREATE TABLE segments (
        id text PRIMARY KEY, conversation_id text NOT NULL REFERENCES conversations(id),
        parent_segment_id text REFERENCES segments(id), session_key text NOT NULL,
        person_id text, platform text, user_id text, chat_id text, chat_type text, thread_id text,
        display_name text, system_prompt text, model text, title text,
        started_at double precision NOT NULL, ended_at double precision, end_reason text,
        input_tokens bigint NOT NULL DEFAULT 0, output_tokens bigint NOT NULL DEFAULT 0,
        cache_read_tokens bigint NOT NULL DEFAULT 0, cache_write_tokens bigint NOT NULL DEFAULT 0,
        cost_usd double precision NOT NULL DEFAULT 0)""",
    "CREATE INDEX segments_conversation ON segments(conversation_id, started_at)",
    # The database itself refuses a second child of one segment: a compression chain cannot fork.
    "CREATE UNIQUE INDEX segments_one_child ON segments(parent_segment_id)"
    " WHERE parent_segment_id IS NOT NULL",
    # Ids of one segment's messages increase in commit order because appends lock the segment row first.
    """CREATE TABLE messages (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        segment_id text NOT NULL REFERENCES segments(id), conversation_id text NOT NULL,
        role text NOT NULL, content text, tool_calls text, tool_call_id text, tool_name text, reasoning text,
        author text, platform_message_id text, api_content text, created_at double precision NOT NULL)""",
    "CREATE INDEX messages_conversation ON messages(conversation_id, segment_id, id)",
    "CREATE INDEX messages_platform_id ON messages(platform_message_id)"
    " WHERE platform_message_id IS NOT NULL",
    # "Conversations this person wrote in" (shared threads) for scoped search: an index seek, not a scan.
    "CREATE INDEX messages_author ON messages(author, conversation_id)"
    " WHERE author IS NOT NULL AND role = 'user'",
    """CREATE TABLE memory_audit (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at double precision NOT NULL, person_id text,
        conversation_id text, actor text NOT NULL, store text NOT NULL, action text NOT NULL,
        old_text text, new_text text)""",
    "CREATE INDEX memory_audit_person ON memory_audit(person_id, at)",
    # Typed columns, not SQLite's JSON in meta: the sweep compares them directly. No foreign key: a record
    # of a missing conversation is swept, not refused.
    """CREATE TABLE compression_cooldowns (
        conversation_id text PRIMARY KEY, segment_id text NOT NULL, until double precision NOT NULL,
        after_message_id bigint NOT NULL, turns integer NOT NULL, kind text NOT NULL, reason text NOT NULL,
        notified boolean NOT NULL DEFAULT false)""",
)

# One row per model call (the segment counters only grow), so usage can be summed over a time range.
_USAGE_LOG: tuple[LiteralString, ...] = (
    """CREATE TABLE usage_log (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at double precision NOT NULL,
        segment_id text NOT NULL, conversation_id text NOT NULL, input_tokens bigint NOT NULL,
        output_tokens bigint NOT NULL, cache_read_tokens bigint NOT NULL, cache_write_tokens bigint NOT NULL,
        cost_usd double precision NOT NULL)""",
    "CREATE INDEX usage_log_at ON usage_log(at)",
)

# Each call says which model and why, who caused it (person and platform copied from the conversation, so
# the row outlives the conversation's deletion) and its priced cost, NULL when the model has no price. The
# old rows take their segment's model and their conversation's person and platform where those still exist;
# their cost (always 0, never priced) becomes unknown.
_USAGE_ATTRIBUTION: tuple[LiteralString, ...] = (
    """ALTER TABLE usage_log ADD COLUMN model text, ADD COLUMN kind text NOT NULL DEFAULT 'turn',
        ADD COLUMN person_id text, ADD COLUMN platform text, ALTER COLUMN cost_usd DROP NOT NULL""",
    """UPDATE usage_log u SET cost_usd = NULL,
        model = (SELECT s.model FROM segments s WHERE s.id = u.segment_id),
        person_id = (SELECT c.person_id FROM conversations c WHERE c.id = u.conversation_id),
        platform = (SELECT c.platform FROM conversations c WHERE c.id = u.conversation_id)""",
    "CREATE INDEX usage_log_person_at ON usage_log(person_id, at)",
)

AGENT_LADDER = PgLadder(
    owner="agent",
    version_table="schema_version",
    migrations=(
        PgMigration(
            1,
            "core: conversations, segments, messages, search, memory documents, skills, audit, facts",
            (*_CORE, *APPEND_DDL, *SEARCH_DDL, *MEMORY_DDL, *FACTS_DDL),
        ),
        PgMigration(
            2, "usage: one row per model call, for usage over time", (*_USAGE_LOG, *USAGE_LOG_APPEND_DDL)
        ),
        PgMigration(3, "search windows: adjacent turns, their vectors, participant names", WINDOW_DDL),
        PgMigration(
            4,
            "usage: each call's model, kind, person, platform, priced cost",
            (*_USAGE_ATTRIBUTION, *USAGE_ATTRIBUTION_APPEND_DDL),
        ),
        PgMigration(5, "retention: large tool outputs by age, ended conversations by end", RETENTION_DDL),
    ),
)


async def read_version(conn: Conn, ladder: PgLadder) -> int:
    """How far ``ladder`` has been applied in the connection's schema; 0 for none of it."""
    row = await (
        await conn.execute(
            "SELECT to_regclass(current_schema() || '.' || %s) IS NOT NULL", (ladder.version_table,)
        )
    ).fetchone()
    if row is None or not row[0]:
        return 0
    found = await (await conn.execute(f"SELECT max(version) FROM {ladder.version_table}")).fetchone()
    return int(found[0]) if found is not None and found[0] is not None else 0


async def versions(db: PgDatabase, ladders: Sequence[PgLadder]) -> dict[str, int]:
    """Each ladder's applied version (for ``check-config --connect`` and backups)."""

    async def read(conn: Conn) -> dict[str, int]:
        return {ladder.owner: await read_version(conn, ladder) for ladder in ladders}

    return await db.run_read(read)


async def migrate(db: PgDatabase, ladders: Sequence[PgLadder]) -> dict[str, int]:
    """Create the schema and bring every ladder (in order) to its latest version; the versions reached.

    Raises ``PostgresUnavailableError`` when the database is newer than this program (nothing written).
    """

    async def apply(conn: Conn) -> dict[str, int]:
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public")
        schema = db.schema
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        reached: dict[str, int] = {}
        for ladder in ladders:
            version = await read_version(conn, ladder)
            if version > ladder.latest:
                raise PostgresUnavailableError(
                    db.where,
                    f"{ladder.owner} schema version {version} is newer than this program supports "
                    f"({ladder.latest}); run the newer release, or restore a backup taken by this one",
                )
            for migration in ladder.migrations:
                if migration.version > version:
                    for statement in migration.statements:
                        await conn.execute(statement)
                    version = migration.version
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {ladder.version_table} (version integer NOT NULL)"
            )
            await conn.execute(f"DELETE FROM {ladder.version_table}")
            await conn.execute(f"INSERT INTO {ladder.version_table}(version) VALUES (%s)", (version,))
            reached[ladder.owner] = version
        return reached

    return await db.run_write(apply)
