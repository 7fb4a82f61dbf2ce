"""The gateway's tables in PostgreSQL (ledger, queue, outbox, identity, pairing, checkpoints, adapter leases)
as its own ladder, applied after the agent's (its tables reference conversations) under the same lock.

Invariants: the same tables and meanings as the SQLite ladder (gateway/storage/sqlite/schema.py), with
release 0.1's eight steps folded into version 1; ``turn_jobs.is_admin`` is a boolean; every time is epoch
seconds of the server's clock (``mg_now()``).
"""

from __future__ import annotations

from typing import LiteralString

from agent_core.storage.postgres.schema import PgLadder, PgMigration

_GATEWAY: tuple[LiteralString, ...] = (
    # Session-key prefixes match in code-point order whatever the database collation (admin_reads).
    'CREATE INDEX conversations_key_c ON conversations((session_key COLLATE "C"), created_at)',
    "CREATE TABLE persons (id text PRIMARY KEY, display_name text, created_at double precision NOT NULL)",
    """CREATE TABLE accounts (
        platform text NOT NULL, account_id text NOT NULL, person_id text NOT NULL REFERENCES persons(id),
        created_at double precision NOT NULL, PRIMARY KEY (platform, account_id))""",
    "CREATE INDEX accounts_person ON accounts(person_id)",
    """CREATE TABLE inbound_events (
        platform text NOT NULL, event_id text NOT NULL, conversation_id text,
        received_at double precision NOT NULL, kind text, PRIMARY KEY (platform, event_id))""",
    """CREATE TABLE turn_jobs (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, conversation_id text NOT NULL,
        state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
        attempts integer NOT NULL DEFAULT 0, created_at double precision NOT NULL, claimed_by text,
        started_at double precision, finished_at double precision, error text,
        person_id text, is_admin boolean NOT NULL DEFAULT false, platform text, chat_ref text, reply_to text,
        interrupt integer NOT NULL DEFAULT 0)""",
    "CREATE INDEX turn_jobs_pending ON turn_jobs(state, conversation_id, id)",
    "CREATE INDEX turn_jobs_conversation ON turn_jobs(conversation_id, state)",
    # The metrics scrape's watermark over finished turns (admin_reads.finished_turns): a range, not a scan.
    "CREATE INDEX turn_jobs_finished ON turn_jobs(finished_at) WHERE finished_at IS NOT NULL",
    """CREATE TABLE leases (
        conversation_id text PRIMARY KEY, holder text NOT NULL, expires_at double precision NOT NULL)""",
    """CREATE TABLE outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, conversation_id text NOT NULL,
        chat_ref text NOT NULL, chunk_index integer NOT NULL DEFAULT 0, idempotency_key text NOT NULL UNIQUE,
        text text NOT NULL,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
        attempts integer NOT NULL DEFAULT 0, platform_message_id text, created_at double precision NOT NULL,
        sent_at double precision, error text, platform text, kind text NOT NULL DEFAULT 'reply',
        job_id bigint, message_id bigint, reply_to text, claimed_by text,
        claim_expires_at double precision)""",
    "CREATE INDEX outbox_pending ON outbox(state, id)",
    "CREATE INDEX outbox_platform_state ON outbox(platform, state, id)",
    "CREATE INDEX outbox_chat ON outbox(chat_ref, state, id)",
    "CREATE INDEX outbox_chat_history ON outbox(chat_ref, id)",
    "CREATE INDEX outbox_message ON outbox(message_id) WHERE message_id IS NOT NULL",
    "CREATE INDEX outbox_sent_at ON outbox(sent_at) WHERE state = 'sent'",
    # admin_reads.queued_replies reads replies by queuing time (its commit-safe cursor), not by id.
    "CREATE INDEX outbox_reply_created ON outbox(created_at) WHERE kind = 'reply'",
    """CREATE TABLE outbox_chunks (
        outbox_id bigint NOT NULL, chunk_index integer NOT NULL, platform_message_id text,
        sent_at double precision NOT NULL, PRIMARY KEY (outbox_id, chunk_index))""",
    # Messages that arrived while a turn ran wait here and join the transcript when the next turn is claimed.
    """CREATE TABLE pending_messages (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, conversation_id text NOT NULL,
        job_id bigint NOT NULL, role text NOT NULL, content text, author text, platform_message_id text,
        created_at double precision NOT NULL)""",
    "CREATE INDEX pending_messages_conversation ON pending_messages(conversation_id, id)",
    """CREATE TABLE link_codes (
        code text PRIMARY KEY, person_id text NOT NULL REFERENCES persons(id),
        created_at double precision NOT NULL, expires_at double precision NOT NULL,
        used_at double precision, used_by text)""",
    "CREATE INDEX link_codes_person ON link_codes(person_id, created_at)",
    """CREATE TABLE pairing_requests (
        code text PRIMARY KEY, platform text NOT NULL, account_id text NOT NULL, display_name text,
        created_at double precision NOT NULL,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'denied')),
        decided_at double precision, decided_by text, UNIQUE (platform, account_id))""",
    "CREATE INDEX pairing_requests_recent ON pairing_requests(platform, created_at)",
    "CREATE INDEX pairing_requests_state ON pairing_requests(state, created_at)",
    """CREATE TABLE access_notices (
        platform text NOT NULL, account_id text NOT NULL, kind text NOT NULL,
        sent_at double precision NOT NULL, PRIMARY KEY (platform, account_id, kind))""",
    """CREATE TABLE adapter_checkpoints (
        platform text NOT NULL, key text NOT NULL, position bigint NOT NULL,
        updated_at double precision NOT NULL, PRIMARY KEY (platform, key))""",
    # Which host runs a polling or socket adapter now; ``generation`` grows with every change of owner.
    """CREATE TABLE adapter_leases (
        adapter text PRIMARY KEY, holder text NOT NULL, host text NOT NULL,
        acquired_at double precision NOT NULL, expires_at double precision NOT NULL,
        generation bigint NOT NULL DEFAULT 1)""",
)
# A message held while a turn runs keeps the exact text the model gets for it (an API client's context).
_HELD_REQUEST_BYTES: tuple[LiteralString, ...] = ("ALTER TABLE pending_messages ADD COLUMN api_content text",)

# Reminders and scheduled turns (gateway.storage.schedules): each schedule, each fired occurrence (unique, so
# one occurrence fires once), the job a run queued (turn_jobs.schedule_run_id), and persons' time zones.
_SCHEDULES: tuple[LiteralString, ...] = (
    """CREATE TABLE schedules (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, person_id text NOT NULL,
        conversation_id text NOT NULL, platform text NOT NULL, chat_ref text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('once', 'interval', 'cron')), spec text NOT NULL,
        timezone text NOT NULL, action text NOT NULL CHECK (action IN ('message', 'prompt')),
        text text NOT NULL,
        state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'done', 'cancelled')),
        reason text, next_run_at double precision, runs integer NOT NULL DEFAULT 0,
        missed integer NOT NULL DEFAULT 0, last_run_at double precision,
        created_at double precision NOT NULL, created_by text NOT NULL,
        is_admin boolean NOT NULL DEFAULT false, updated_at double precision NOT NULL)""",
    "CREATE INDEX schedules_due ON schedules(next_run_at) WHERE state = 'active'",
    "CREATE INDEX schedules_person ON schedules(person_id, state)",
    "CREATE INDEX schedules_conversation ON schedules(conversation_id, state)",
    """CREATE TABLE schedule_runs (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, schedule_id bigint NOT NULL,
        occurrence_at double precision NOT NULL, fired_at double precision NOT NULL,
        conversation_id text NOT NULL,
        kind text NOT NULL DEFAULT 'on_time' CHECK (kind IN ('on_time', 'catch_up')),
        missed integer NOT NULL DEFAULT 0, UNIQUE (schedule_id, occurrence_at))""",
    "ALTER TABLE turn_jobs ADD COLUMN schedule_run_id bigint",
    "CREATE INDEX turn_jobs_schedule_run ON turn_jobs(schedule_run_id) WHERE schedule_run_id IS NOT NULL",
    """CREATE TABLE person_timezones (
        person_id text PRIMARY KEY, timezone text NOT NULL, updated_at double precision NOT NULL)""",
)


# The key web chat cookies and API tokens are hashed with (gateway.storage.client_keys): one row, so every
# host turns a cookie into the same account.
_CLIENT_KEY: tuple[LiteralString, ...] = (
    """CREATE TABLE client_key (
        id smallint PRIMARY KEY CHECK (id = 1), secret bytea NOT NULL,
        created_at double precision NOT NULL)""",
)

# Budgets: one notice per person, limit and period (the primary key is the "notified for this period"
# guard, and its rows with a future reset are the refusals in force), refusals counted by scope kind, a
# person's recent jobs found by index (their largest recent turn is the budget's estimate), and each scope's
# spend settled in 15-minute slots up to its watermark (so a decision never sums a whole month of usage).
_BUDGETS: tuple[LiteralString, ...] = (
    """CREATE TABLE budget_notices (
        person_id text NOT NULL, scope_key text NOT NULL, limit_name text NOT NULL,
        period_start double precision NOT NULL, resets_at double precision NOT NULL,
        notified_at double precision NOT NULL, job_id bigint,
        PRIMARY KEY (person_id, scope_key, limit_name, period_start))""",
    "CREATE INDEX budget_notices_resets ON budget_notices(resets_at)",
    "CREATE TABLE budget_refusals (scope_kind text PRIMARY KEY, refused bigint NOT NULL)",
    "CREATE INDEX turn_jobs_person ON turn_jobs(person_id, id)",
    """CREATE TABLE budget_slots (
        scope_key text NOT NULL, slot_start double precision NOT NULL, usd double precision NOT NULL,
        tokens bigint NOT NULL, PRIMARY KEY (scope_key, slot_start))""",
    "CREATE TABLE budget_watermarks (scope_key text PRIMARY KEY, settled_until double precision NOT NULL)",
)

# Retention (gateway.retention): ledger rows by age; the run's lease and last finish (one row, the server's
# clock); what retention removed, per kind, so counts derived from rows stay monotonic once rows go.
_RETENTION: tuple[LiteralString, ...] = (
    "CREATE INDEX inbound_events_received ON inbound_events(received_at)",
    """CREATE TABLE retention_run (
        id smallint PRIMARY KEY CHECK (id = 1), holder text, expires_at double precision NOT NULL DEFAULT 0,
        finished_at double precision)""",
    "CREATE TABLE retention_totals (kind text PRIMARY KEY, removed bigint NOT NULL DEFAULT 0)",
)

GATEWAY_LADDER = PgLadder(
    owner="gateway",
    version_table="gateway_schema_version",
    migrations=(
        PgMigration(1, "gateway: identity, ledger, queue, outbox, pairing, checkpoints, leases", _GATEWAY),
        PgMigration(2, "queue: held messages keep their request bytes (api_content)", _HELD_REQUEST_BYTES),
        PgMigration(
            3,
            "chat windows: command text of command replies, reopened conversations",
            (
                "ALTER TABLE outbox ADD COLUMN request_text text",
                # Only gateway code reads or writes it (reopening is the web chat's).
                "ALTER TABLE conversations ADD COLUMN reopened_at double precision",
            ),
        ),
        PgMigration(4, "gateway: the client key every host hashes cookies and API tokens with", _CLIENT_KEY),
        PgMigration(5, "schedules: reminders and scheduled turns, their runs, time zones", _SCHEDULES),
        PgMigration(
            6, "budgets: notices per limit and period, refusals, recent jobs, settled spend", _BUDGETS
        ),
        PgMigration(7, "retention: ledger by age, the run's lease, removed totals", _RETENTION),
    ),
)
