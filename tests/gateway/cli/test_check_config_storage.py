"""``mnemogate check-config [--connect]`` on the storage: what an operator sees for SQLite and PostgreSQL.

The PostgreSQL cases use the run's throwaway database (``postgres_database``; skipped with the reason when
there is no server, failed when ``MNEMOGATE_TEST_POSTGRES=required``), each in the home's own schema.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_core.storage.postgres.engine import PgDatabase
from agent_core.storage.postgres.schema import AGENT_LADDER, migrate
from agent_core.storage.postgres.settings import PostgresSettings
from gateway.cli.main import main
from gateway.cli.storage_check import SchemaTooNewError, _fit
from gateway.storage.postgres.probe import LADDERS, classify, parse_dsn
from gateway.storage.sqlite import open_state_store

from ... import postgres_server


def _check(home: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["check-config", "--home", str(home), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _postgres_config(home: Path, dsn: str, schema: str | None = None) -> None:
    schema = schema or postgres_server.schema_for(home)
    text = f"storage:\n  backend: postgres\n  postgres:\n    dsn: '{dsn}'\n    schema: {schema}\n"
    text += "    connect_timeout_s: 2\n"
    (home / "config.yaml").write_text(text, encoding="utf-8")


def _with(dsn: str, **changes: str) -> str:
    params = conninfo_to_dict(dsn)
    params.update(changes)
    return make_conninfo(**params)  # type: ignore[arg-type]


# --- SQLite -----------------------------------------------------------------------------------------------


def test_sqlite_connect_on_a_fresh_home_has_nothing_to_check(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _check(home, capsys, "--connect")
    assert code == 0
    assert f"storage: sqlite ({home / 'state.db'})" in out
    assert "state.db does not exist yet: it will be created on first start (nothing to check)" in out
    assert not (home / "state.db").exists()


def test_sqlite_connect_reads_the_versions_without_writing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_open_and_close(home))
    before = (home / "state.db").stat().st_mtime_ns
    code, out, _ = _check(home, capsys, "--connect")
    assert code == 0, out
    assert "state.db: agent v" in out and ": up to date" in out
    assert (home / "state.db").stat().st_mtime_ns == before


def test_sqlite_connect_refuses_a_database_from_a_newer_release(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_open_and_close(home))
    with sqlite3.connect(home / "state.db") as conn:
        conn.execute("UPDATE gateway_schema_version SET version = 99")
    code, _, err = _check(home, capsys, "--connect")
    assert code == 2
    assert err.startswith("mnemogate: error: state.db was written by a newer mnemogate: gateway v99")
    assert len(err.strip().splitlines()) == 1


async def _open_and_close(home: Path) -> None:
    async with open_state_store(home):
        return


# --- PostgreSQL without a server ---------------------------------------------------------------------------


def test_the_dsn_is_parsed_and_printed_redacted(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _postgres_config(home, "postgresql://mg:s3cr3t-pw@db.internal:6543/mnemo", schema="mg")
    code, out, _ = _check(home, capsys)
    assert code == 0
    assert "storage: postgres" in out
    assert (
        "dsn: postgresql://mg:***@db.internal:6543/mnemo (host db.internal, port 6543, database mnemo, "
        "user mg, password set); schema mg" in out
    )
    assert "s3cr3t" not in out


def test_a_dsn_that_does_not_parse_is_one_line_without_the_password(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _postgres_config(home, "host=db password=top secret")
    code, out, err = _check(home, capsys)
    assert code == 2
    assert err.startswith('mnemogate: error: storage.postgres.dsn does not parse: missing "="')
    assert "secret" not in err + out and "top" not in err
    assert len(err.strip().splitlines()) == 1


def test_unreachable_server_is_one_line_within_the_connect_timeout(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _postgres_config(home, "postgresql://mg:pw-unseen@127.0.0.1:1/mnemo")
    started = time.monotonic()
    code, _, err = _check(home, capsys, "--connect")
    assert time.monotonic() - started < 10
    assert code == 2
    assert "cannot connect to PostgreSQL postgresql://mg:***@127.0.0.1:1/mnemo" in err
    assert "the server is unreachable" in err and "pw-unseen" not in err
    assert len(err.strip().splitlines()) == 1


def test_connection_failures_are_told_apart() -> None:
    refused = 'connection failed: connection to server at "h", port 1 failed: Connection refused'
    assert classify(Exception(refused))[0] == "unreachable"
    assert classify(Exception('... failed: FATAL:  database "x" does not exist'))[0] == "database"
    assert classify(Exception('... failed: FATAL:  password authentication failed for user "u"'))[0] == (
        "authentication"
    )
    assert classify(Exception('... failed: FATAL:  role "nobody" does not exist'))[0] == "authentication"
    assert classify(Exception("failed to resolve host 'nohost': [Errno -2]"))[0] == "unreachable"
    assert parse_dsn("host=/run/postgresql dbname=mg").host == "/run/postgresql"


def test_schema_fit_wording() -> None:
    assert _fit("schema s", {"agent": 1, "gateway": 1}, {"agent": 1, "gateway": 1}) == (
        "agent v1, gateway v1: up to date"
    )
    assert _fit("schema s", {"agent": 1, "gateway": 0}, {"agent": 2, "gateway": 1}) == (
        "agent v1, gateway v0: will migrate on first start (agent v1 -> v2, gateway v0 -> v1)"
    )
    assert "no tables yet" in _fit("schema s", {"agent": 0, "gateway": 0}, {"agent": 2, "gateway": 1})
    with pytest.raises(SchemaTooNewError, match="agent v3 \\(this program: v2\\)"):
        _fit("schema s", {"agent": 3, "gateway": 1}, {"agent": 2, "gateway": 1})


# --- PostgreSQL with the run's server ----------------------------------------------------------------------


def test_connect_reports_the_server_and_a_schema_to_be_created(
    postgres_database: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _postgres_config(home, postgres_database)
    code, out, err = _check(home, capsys, "--connect")
    assert code == 0, err
    assert "server: PostgreSQL 1" in out and "answered in" in out
    schema = postgres_server.schema_for(home)
    assert f"schema {schema} does not exist yet: it will be created on first start" in out
    with postgres_server.server_connection() as conn:
        assert conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None


def test_connect_after_the_first_start_says_up_to_date_and_refuses_newer(
    postgres_database: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = postgres_server.postgres_settings(home)
    asyncio.run(_migrate(settings))
    _postgres_config(home, postgres_database)
    code, out, err = _check(home, capsys, "--connect")
    assert code == 0, err
    latest = ", ".join(f"{ladder.owner} v{ladder.latest}" for ladder in LADDERS)
    assert f"schema {settings.schema_name}: {latest}: up to date" in out

    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f"UPDATE {settings.schema_name}.{AGENT_LADDER.version_table} SET version = 42")  # type: ignore[arg-type]
    code, _, err = _check(home, capsys, "--connect")
    assert code == 2
    assert f"schema {settings.schema_name} was written by a newer mnemogate: agent v42" in err


async def _migrate(settings: PostgresSettings) -> None:
    async with PgDatabase(settings) as db:
        await migrate(db, LADDERS)


def test_connect_names_a_missing_database_and_a_refused_role(
    postgres_database: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _postgres_config(home, _with(postgres_database, dbname="mg_no_such_database"))
    code, _, err = _check(home, capsys, "--connect")
    assert code == 2 and "the database does not exist" in err and "mg_no_such_database" in err

    _postgres_config(home, _with(postgres_database, user="mg_no_such_role", password="pw-unseen"))
    code, _, err = _check(home, capsys, "--connect")
    assert code == 2 and "authentication failed" in err and "pw-unseen" not in err
