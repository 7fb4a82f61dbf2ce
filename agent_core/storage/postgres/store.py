"""``PgAgentStore``: the agent's repositories (conversations, messages, chain, audit) on PostgreSQL."""

from __future__ import annotations

from .engine import PgDatabase


class PgAgentStore:
    """``AgentStorage`` over one ``PgDatabase`` (to be filled in)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
