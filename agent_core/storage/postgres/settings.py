"""Typed knobs of the PostgreSQL backend (``storage.postgres``); the DSN is the one thing it needs.

Invariants: validated once at boot and never read from the environment here (``gateway.config`` maps
``MNEMOGATE_STORAGE__POSTGRES__DSN`` and ``DATABASE_URL`` onto ``dsn``); ``schema`` names the PostgreSQL
schema every table lives in, so several deployments (or test runs) can share one database; a DSN's
password never appears in a message (``redacted_dsn``).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class PostgresSettings(BaseModel):
    """Where the database is and how many connections one process keeps to it."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    dsn: SecretStr | None = None
    """``postgresql://user:password@host:5432/dbname`` or ``host=… dbname=…``; required for this backend."""
    schema_name: str = Field(default="public", alias="schema")
    pool_min: int = Field(default=1, ge=0)
    pool_max: int = Field(default=8, ge=1)
    """At most this many pooled connections per process (the wake-up listener holds one of its own)."""
    connect_timeout_s: float = Field(default=5.0, gt=0.0)
    """How long opening (or re-opening) a connection may take before the database counts as unreachable."""
    statement_timeout_s: float = Field(default=30.0, ge=0.0)
    """Server-side limit per statement (0: none), so a stuck query fails instead of holding a lease."""
    listen: bool = True
    """Wake other processes' workers and delivery loops at once with LISTEN/NOTIFY; they still poll as a
    fallback (``queue.poll_max_s``, ``delivery.poll_max_s``), so a notification lost with a dropped
    connection costs at most one poll interval."""

    @field_validator("schema_name")
    @classmethod
    def _plain_schema(cls, value: str) -> str:
        if not _SCHEMA_NAME.match(value):
            raise ValueError(
                f"{value!r} is not a plain schema name (lower-case letters, digits and _, at most 63)"
            )
        return value

    @property
    def conninfo(self) -> str:
        """The DSN itself (secret: never log it; ``redacted_dsn`` is what messages show)."""
        if self.dsn is None or not self.dsn.get_secret_value().strip():
            raise ValueError(
                "storage.postgres.dsn is not set "
                "(config.yaml, MNEMOGATE_STORAGE__POSTGRES__DSN or DATABASE_URL)"
            )
        return self.dsn.get_secret_value()

    @model_validator(mode="after")
    def _min_within_max(self) -> PostgresSettings:
        if self.pool_min > self.pool_max:
            raise ValueError(f"pool_min ({self.pool_min}) is larger than pool_max ({self.pool_max})")
        return self


def redacted_dsn(dsn: str) -> str:
    """``dsn`` with any password replaced by ``***`` (URL ``user:pw@`` and ``password=`` forms)."""
    without_url_password = re.sub(r"(://[^:/@\s]+):[^@\s]*@", r"\1:***@", dsn)
    return re.sub(r"(password\s*=\s*)(\S+)", r"\1***", without_url_password, flags=re.IGNORECASE)
