"""Throwaway schemas for the benchmarks: a fresh schema of a given database, measured, then dropped.

Invariants: the schema's name is new (``<prefix>_<epoch>_<random>``), so a benchmark never touches a
deployment's data; it is dropped (``CASCADE``) when the block exits, however it exits; nothing is created
here — the storage's own first open migrates the schema, exactly as a first start would.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Iterator

import psycopg
from pydantic import SecretStr

from agent_core.storage.postgres.engine import PostgresUnavailableError
from agent_core.storage.postgres.settings import PostgresSettings, redacted_dsn

from .probe import classify


@contextlib.contextmanager
def scratch_schema(dsn: str, *, prefix: str = "bench", **knobs: object) -> Iterator[PostgresSettings]:
    """Settings naming a new schema of ``dsn``'s database (with ``knobs``); the schema is dropped after."""
    name = f"{prefix}_{int(time.time())}_{secrets.token_hex(4)}"
    settings = PostgresSettings.model_validate({"dsn": SecretStr(dsn), "schema": name, **knobs})
    try:
        yield settings
    finally:
        drop_schema(settings)


def drop_schema(settings: PostgresSettings) -> None:
    """Drop the settings' schema and everything in it (nothing if it does not exist)."""
    with _connection(settings) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{settings.schema_name}" CASCADE')


def schema_bytes(settings: PostgresSettings) -> int:
    """Bytes on disk of every table of the settings' schema, with its indexes and TOAST."""
    with _connection(settings) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            (settings.schema_name,),
        ).fetchone()
    return int(str(row[0])) if row is not None else 0


def _connection(settings: PostgresSettings) -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(
            settings.conninfo,
            connect_timeout=max(1, round(settings.connect_timeout_s)),
            autocommit=True,
            application_name="mnemogate-bench",
        )
    except psycopg.Error as exc:
        raise PostgresUnavailableError(redacted_dsn(settings.conninfo), classify(exc)[1]) from None
