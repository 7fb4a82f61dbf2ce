"""The gateway's tables in state.db (ledger, queue, outbox, identity, pairing, checkpoints, adapter leases) as
its own ladder.

Invariants: the ladder is applied after the agent's (its tables reference conversations) by every gateway
process that opens state.db; its version lives in ``gateway_schema_version``; a database of release 0.1
(one shared ladder) is recognised by its ``persons`` table and counts as migrated to the shared version — the
one recorded before any open (even the agent's alone) moved ``schema_version``, see
``agent_core.storage.sqlite.schema.shared_version``.
"""

from __future__ import annotations

from agent_core.storage.sqlite.schema import Ladder, Migration

_PERSONS = (
    "CREATE TABLE persons (id TEXT PRIMARY KEY, display_name TEXT, created_at REAL NOT NULL)",
    """CREATE TABLE accounts (
        platform TEXT NOT NULL, account_id TEXT NOT NULL,
        person_id TEXT NOT NULL REFERENCES persons(id), created_at REAL NOT NULL,
        PRIMARY KEY (platform, account_id)) WITHOUT ROWID""",
    "CREATE INDEX accounts_person ON accounts(person_id)",
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

# Which process runs a polling or socket adapter now; ``generation`` grows with every change of holder.
_ADAPTER_LEASES = (
    """CREATE TABLE adapter_leases (
        adapter TEXT PRIMARY KEY, holder TEXT NOT NULL, host TEXT NOT NULL, acquired_at REAL NOT NULL,
        expires_at REAL NOT NULL, generation INTEGER NOT NULL DEFAULT 1) WITHOUT ROWID""",
)

# A message held while a turn runs keeps the exact text the model gets for it (an API client's context).
_HELD_REQUEST_BYTES = ("ALTER TABLE pending_messages ADD COLUMN api_content TEXT",)

# Reminders and scheduled turns (gateway.storage.schedules): each schedule, each fired occurrence (unique, so
# one occurrence fires once), the job a run queued (turn_jobs.schedule_run_id), and persons' time zones.
_SCHEDULES = (
    """CREATE TABLE schedules (
        id INTEGER PRIMARY KEY AUTOINCREMENT, person_id TEXT NOT NULL, conversation_id TEXT NOT NULL,
        platform TEXT NOT NULL, chat_ref TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('once', 'interval', 'cron')), spec TEXT NOT NULL,
        timezone TEXT NOT NULL, action TEXT NOT NULL CHECK (action IN ('message', 'prompt')),
        text TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'done', 'cancelled')),
        reason TEXT, next_run_at REAL, runs INTEGER NOT NULL DEFAULT 0, missed INTEGER NOT NULL DEFAULT 0,
        last_run_at REAL, created_at REAL NOT NULL, created_by TEXT NOT NULL,
        is_admin INTEGER NOT NULL DEFAULT 0, updated_at REAL NOT NULL)""",
    "CREATE INDEX schedules_due ON schedules(next_run_at) WHERE state = 'active'",
    "CREATE INDEX schedules_person ON schedules(person_id, state)",
    "CREATE INDEX schedules_conversation ON schedules(conversation_id, state)",
    """CREATE TABLE schedule_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, schedule_id INTEGER NOT NULL, occurrence_at REAL NOT NULL,
        fired_at REAL NOT NULL, conversation_id TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'on_time' CHECK (kind IN ('on_time', 'catch_up')),
        missed INTEGER NOT NULL DEFAULT 0, UNIQUE (schedule_id, occurrence_at))""",
    "ALTER TABLE turn_jobs ADD COLUMN schedule_run_id INTEGER",
    "CREATE INDEX turn_jobs_schedule_run ON turn_jobs(schedule_run_id) WHERE schedule_run_id IS NOT NULL",
    """CREATE TABLE person_timezones (
        person_id TEXT PRIMARY KEY, timezone TEXT NOT NULL, updated_at REAL NOT NULL) WITHOUT ROWID""",
)


# Chat windows: a command reply keeps the command as written (shown together after a reload), and a chat
# may make an ended conversation live again, which counts as activity for idle resets. The gateway adds
# ``reopened_at`` to the agent's table: only gateway code reads or writes it, and the agent's own version
# (``schema_version``, which release 0.1 reads) stays where it is.
_CHAT_WINDOWS = (
    "ALTER TABLE outbox ADD COLUMN request_text TEXT",
    "ALTER TABLE conversations ADD COLUMN reopened_at REAL",
)


# Budgets: one notice per person, limit and period (the primary key is the "notified for this period"
# guard, and its rows with a future reset are the refusals in force), refusals counted by scope kind, a
# person's recent jobs found by index (their largest recent turn is the budget's estimate), and each scope's
# spend settled in 15-minute slots up to its watermark (so a decision never sums a whole month of usage).
_BUDGETS = (
    """CREATE TABLE budget_notices (
        person_id TEXT NOT NULL, scope_key TEXT NOT NULL, limit_name TEXT NOT NULL,
        period_start REAL NOT NULL, resets_at REAL NOT NULL, notified_at REAL NOT NULL, job_id INTEGER,
        PRIMARY KEY (person_id, scope_key, limit_name, period_start)) WITHOUT ROWID""",
    "CREATE INDEX budget_notices_resets ON budget_notices(resets_at)",
    "CREATE TABLE budget_refusals (scope_kind TEXT PRIMARY KEY, refused INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE INDEX turn_jobs_person ON turn_jobs(person_id, id)",
    """CREATE TABLE budget_slots (
        scope_key TEXT NOT NULL, slot_start REAL NOT NULL, usd REAL NOT NULL, tokens INTEGER NOT NULL,
        PRIMARY KEY (scope_key, slot_start)) WITHOUT ROWID""",
    """CREATE TABLE budget_watermarks (
        scope_key TEXT PRIMARY KEY, settled_until REAL NOT NULL) WITHOUT ROWID""",
)

# Retention (gateway.retention): ledger rows and finished jobs by age, so pruning is an index range; the
# run's lease and last finish (one row); what retention removed, per kind, so counts derived from rows
# (finished turns, given-up replies) stay monotonic once their rows are gone.
_RETENTION = (
    "CREATE INDEX IF NOT EXISTS inbound_events_received ON inbound_events(received_at)",
    "CREATE INDEX IF NOT EXISTS turn_jobs_finished ON turn_jobs(finished_at) WHERE finished_at IS NOT NULL",
    """CREATE TABLE retention_run (
        id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT, expires_at REAL NOT NULL DEFAULT 0,
        finished_at REAL)""",
    """CREATE TABLE retention_totals (
        kind TEXT PRIMARY KEY, removed INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID""",
)


GATEWAY_LADDER = Ladder(
    owner="gateway",
    version_table="gateway_schema_version",
    legacy_table="persons",
    migrations=(
        Migration(1, "identity: persons and their platform accounts", _PERSONS),
        Migration(2, "gateway: inbound ledger, turn jobs, leases, outbox", _GATEWAY),
        Migration(3, "identity: link codes, pairing requests, access notices", _IDENTITY),
        Migration(4, "queue: job routing, interrupt flag, outbox claims, chunk progress", _GATEWAY_QUEUE),
        Migration(5, "(agent tables: owned by the agent's ladder)", ()),
        Migration(6, "adapters: checkpoints kept across restarts", _CHECKPOINTS),
        Migration(7, "outbox: rows of one chat, for chat windows' history", _CHAT_NOTICES),
        Migration(8, "outbox: chat history index under its own name; delivered rows by age", _OUTBOX_READS),
        Migration(9, "adapters: leases, so a polling or socket adapter runs in one process", _ADAPTER_LEASES),
        Migration(10, "queue: held messages keep their request bytes (api_content)", _HELD_REQUEST_BYTES),
        Migration(11, "chat windows: command text of command replies, reopened conversations", _CHAT_WINDOWS),
        Migration(12, "schedules: reminders and scheduled turns, their runs, time zones", _SCHEDULES),
        Migration(
            13, "budgets: notices per limit and period, refusals, recent jobs, settled spend", _BUDGETS
        ),
        Migration(14, "retention: ledger and jobs by age, the run's lease, removed totals", _RETENTION),
    ),
)
