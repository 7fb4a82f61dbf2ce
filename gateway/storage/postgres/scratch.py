"""Throwaway schemas for the benchmarks: a fresh schema of a given database, measured, then dropped.

Invariants: the schema's name is new (``<prefix>_<epoch>_<random>``), so a benchmark never touches a
deployment's data; it is dropped (``CASCADE``) when the block exits, however it exits; nothing is created
here — the storage's own first open migrates the schema, exactly as a first start would.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True, slots=True)
class ServerActivity:
    """The database server's own counters for the settings' database (cumulative; subtract two readings).

    ``wal_bytes`` is the cluster's write-ahead log position, so it counts every database's writes;
    ``cpu_s`` is the CPU time of the server's processes (with the backends that exited), or None when the
    server does not run on this machine.
    """

    transactions: int
    tuples_written: int
    tuples_read: int
    wal_bytes: int
    cpu_s: float | None

    def minus(self, earlier: ServerActivity) -> ServerActivity:
        cpu = None if self.cpu_s is None or earlier.cpu_s is None else self.cpu_s - earlier.cpu_s
        return ServerActivity(
            self.transactions - earlier.transactions,
            self.tuples_written - earlier.tuples_written,
            self.tuples_read - earlier.tuples_read,
            self.wal_bytes - earlier.wal_bytes,
            cpu,
        )


def server_activity(settings: PostgresSettings) -> ServerActivity:
    """Read the counters now. Backends publish theirs when they exit (or about once a second when busy),
    so read after the measured processes closed their pools."""
    with _connection(settings) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted,"
            " tup_returned + tup_fetched, pg_current_wal_lsn() - '0/0'::pg_lsn"
            " FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()
        assert row is not None and pid is not None
        cpu_s = _server_cpu_s(int(str(pid[0])))  # while this backend lives: /proc finds its parent through it
    transactions, written, read, wal = (int(str(value)) for value in row)
    return ServerActivity(transactions, written, read, wal, cpu_s)


def _server_cpu_s(backend_pid: int) -> float | None:
    """User + system CPU seconds of the postmaster, its live children and its reaped ones (from /proc)."""
    try:
        if not Path(f"/proc/{backend_pid}/comm").read_text().startswith("postgres"):
            return None  # a server elsewhere: this pid is some other process here
        parent = int(_proc_stat(backend_pid)[1])
        ticks = os.sysconf("SC_CLK_TCK")
        postmaster = _proc_stat(parent)
        total = sum(int(v) for v in postmaster[11:15])  # utime, stime, cutime, cstime
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != backend_pid:
                with contextlib.suppress(OSError, IndexError, ValueError):
                    fields = _proc_stat(int(entry.name))
                    if int(fields[1]) == parent:
                        total += int(fields[11]) + int(fields[12])
        return total / ticks
    except (OSError, IndexError, ValueError):
        return None  # not on this machine (or not Linux)


def _proc_stat(pid: int) -> list[str]:
    """/proc/<pid>/stat from the field after the command name: [state, ppid, …] (utime is index 11)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def backends_cpu_s(settings: PostgresSettings, application_name: str = "mnemogate") -> dict[int, float]:
    """CPU seconds so far of each server process serving ``application_name`` on the settings' database
    (empty when the server does not run on this machine): subtract two readings to cost a piece of work."""
    with _connection(settings) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
            (application_name,),
        ).fetchall()
    ticks = os.sysconf("SC_CLK_TCK")
    spent: dict[int, float] = {}
    for (pid,) in rows:
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = _proc_stat(int(str(pid)))
            spent[int(str(pid))] = (int(fields[11]) + int(fields[12])) / ticks
    return spent
