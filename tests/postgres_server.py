"""The PostgreSQL server the tests use: one throwaway database per test run, one schema per test home.

``MNEMOGATE_TEST_POSTGRES_DSN`` names the server (default: the one this kind of machine runs at
127.0.0.1:5432, user postgres, trust auth). Without a reachable server a test that needs it is skipped with
the reason, unless ``MNEMOGATE_TEST_POSTGRES=required`` (``.ci/run`` sets it), which fails it instead so CI
can never pass by skipping. The run's database (``mg_test_<epoch>_<random>``) is created on first use and
dropped at the end of the run; databases that an earlier, killed run left behind are dropped once they are
older than ``STALE_AFTER_S``. Spawned processes find the run's database in ``RUN_DSN_VARIABLE``.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_core.storage.postgres.settings import PostgresSettings
from gateway.config import StorageSettings

SERVER_DSN = os.environ.get("MNEMOGATE_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
REQUIRED = os.environ.get("MNEMOGATE_TEST_POSTGRES", "").lower() == "required"
RUN_DSN_VARIABLE = "MNEMOGATE_TEST_POSTGRES_RUN_DSN"
STALE_AFTER_S = 6 * 3600
_PREFIX = "mg_test_"


def unreachable_reason() -> str | None:
    """Why the test server cannot be used, or None when it answers."""
    try:
        with psycopg.connect(SERVER_DSN, connect_timeout=3, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"PostgreSQL at {SERVER_DSN} is unreachable ({str(exc).strip().splitlines()[0]})"
    return None


def require_server() -> None:
    """Skip (or, when required, fail) the calling test if the server does not answer."""
    reason = unreachable_reason()
    if reason is None:
        return
    if REQUIRED:
        pytest.fail(f"{reason}; MNEMOGATE_TEST_POSTGRES=required, so this is a failure, not a skip")
    pytest.skip(f"{reason} (set MNEMOGATE_TEST_POSTGRES_DSN, or MNEMOGATE_TEST_POSTGRES=required to fail)")


def server_connection() -> psycopg.Connection[tuple[object, ...]]:
    """An autocommit connection to the server's maintenance database (creating and dropping databases)."""
    return psycopg.connect(SERVER_DSN, connect_timeout=5, autocommit=True)


def database_dsn(name: str) -> str:
    """The server DSN pointed at database ``name``."""
    params = conninfo_to_dict(SERVER_DSN)
    params["dbname"] = name
    return make_conninfo(**params)  # type: ignore[arg-type]


def throwaway_database() -> Iterator[str]:
    """Create this run's database, yield its DSN, drop it (and stale ones earlier runs left)."""
    require_server()
    name = f"{_PREFIX}{int(time.time())}_{secrets.token_hex(4)}"
    with server_connection() as conn:
        _drop_stale(conn)
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    dsn = database_dsn(name)
    os.environ[RUN_DSN_VARIABLE] = dsn
    try:
        yield dsn
    finally:
        os.environ.pop(RUN_DSN_VARIABLE, None)
        with server_connection() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def _drop_stale(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (_PREFIX + "%",)).fetchall()
    for (name,) in rows:
        stamp = str(name)[len(_PREFIX) :].split("_", 1)[0]
        if stamp.isdigit() and time.time() - int(stamp) > STALE_AFTER_S:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def schema_for(home: Path) -> str:
    """The schema one test home's data lives in (the same for every process given that home)."""
    return "t_" + hashlib.sha1(str(home.resolve()).encode()).hexdigest()[:16]


def run_dsn() -> str:
    """This run's database (set by the ``postgres_database`` fixture, inherited by spawned processes)."""
    dsn = os.environ.get(RUN_DSN_VARIABLE)
    if not dsn:
        raise RuntimeError(f"{RUN_DSN_VARIABLE} is not set: request the postgres_database fixture first")
    return dsn


def postgres_settings(home: Path, **knobs: object) -> PostgresSettings:
    """``storage.postgres`` for ``home``: this run's database, the home's own schema."""
    return PostgresSettings.model_validate({"dsn": run_dsn(), "schema": schema_for(home), **knobs})


def storage_settings(home: Path) -> StorageSettings:
    return StorageSettings(backend="postgres", postgres=postgres_settings(home))
