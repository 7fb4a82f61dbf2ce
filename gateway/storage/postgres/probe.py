"""What ``check-config`` learns about a PostgreSQL database: the DSN parsed, and (``--connect``) the server
and how this program's schema ladders fit the configured schema.

Invariants: nothing here writes to the database (the probe reads in one read-only transaction and never
migrates); a DSN's password never appears in a message or a record (``DsnInfo.redacted``); a connection
attempt gives up after ``connect_timeout_s`` (libpq's own timeout, plus a bounded wait around it), and its
failure is one ``PostgresConnectError`` naming the kind of trouble (unreachable, authentication, missing
database) in one line.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import psycopg
from psycopg.conninfo import conninfo_to_dict

from agent_core.storage.errors import StateError
from agent_core.storage.postgres.engine import Conn, PgDatabase, PostgresUnavailableError
from agent_core.storage.postgres.schema import AGENT_LADDER, PgLadder, read_version
from agent_core.storage.postgres.settings import PostgresSettings, redacted_dsn

from .schema import GATEWAY_LADDER

LADDERS: tuple[PgLadder, ...] = (AGENT_LADDER, GATEWAY_LADDER)
"""Both ladders in the order ``open_postgres_storage`` applies them (without importing every repository)."""

ConnectTrouble = Literal["unreachable", "authentication", "database", "refused"]

# libpq's (English) wording of each kind of connection failure; anything else is "refused".
_TROUBLE_MARKS: tuple[tuple[ConnectTrouble, tuple[str, ...]], ...] = (
    (
        "authentication",
        ("authentication failed", 'role "', "no pg_hba.conf entry", "password", "permission denied"),
    ),
    (
        "unreachable",
        (
            "connection refused",
            "timeout expired",
            "timed out",
            "could not translate host name",
            "failed to resolve host",
            "network is unreachable",
            "no route to host",
            "no such file or directory",
            "server closed the connection",
            "ssl negotiation",
        ),
    ),
)
_TROUBLE_TEXT: Mapping[ConnectTrouble, str] = {
    "unreachable": "the server is unreachable",
    "authentication": "authentication failed",
    "database": "the database does not exist",
    "refused": "the server refused the connection",
}


class DsnError(StateError):
    """``storage.postgres.dsn`` does not parse as a libpq connection string or URL."""


class PostgresConnectError(PostgresUnavailableError):
    """A connection to the configured database failed; ``trouble`` says which way."""

    def __init__(self, where: str, trouble: ConnectTrouble, reason: str) -> None:
        self.trouble = trouble
        super().__init__(where, reason)

    def _describe(self) -> str:
        return f"cannot connect to PostgreSQL {self.where}: {_TROUBLE_TEXT[self.trouble]} ({self.reason})"


@dataclass(frozen=True, slots=True)
class DsnInfo:
    """A parsed DSN without its secret: what the operator configured, safe to print."""

    redacted: str
    host: str
    port: str
    dbname: str
    user: str
    has_password: bool


@dataclass(frozen=True, slots=True)
class LadderFit:
    """One ladder's version in the database against this program's."""

    owner: str
    found: int
    latest: int

    @property
    def verdict(self) -> Literal["missing", "older", "current", "newer"]:
        if self.found == 0:
            return "missing"
        if self.found < self.latest:
            return "older"
        return "current" if self.found == self.latest else "newer"


@dataclass(frozen=True, slots=True)
class ServerProbe:
    """What one read-only visit to the server found."""

    server_version: str
    database: str
    user: str
    schema: str
    schema_exists: bool
    may_create_schema: bool
    trigram_available: bool
    ladders: tuple[LadderFit, ...]
    seconds: float


def parse_dsn(dsn: str) -> DsnInfo:
    """``dsn`` parsed (libpq's rules: URL or ``key=value``); DsnError naming the problem when it does not."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        first = str(exc).strip().splitlines()
        raise DsnError(
            f"storage.postgres.dsn does not parse: {_without_secrets(first[0] if first else 'invalid', dsn)} "
            f"(expected postgresql://user:password@host:5432/dbname or host=… dbname=…)"
        ) from None
    return DsnInfo(
        redacted=redacted_dsn(dsn),
        host=str(params.get("host") or params.get("hostaddr") or "local socket"),
        port=str(params.get("port") or "5432"),
        dbname=str(params.get("dbname") or params.get("user") or "(the user's name)"),
        user=str(params.get("user") or "(the OS user)"),
        has_password="password" in params,
    )


def _without_secrets(message: str, dsn: str) -> str:
    """libpq's message with the DSN redacted and any other quoted fragment of it (a piece of a password,
    maybe) replaced by ``…``; quoted punctuation (``"="``, ``"]"``) is kept, it says what is missing."""
    shown = redacted_dsn(dsn)

    def keep(match: re.Match[str]) -> str:
        text = match.group(1)
        return match.group(0) if text == shown or not any(c.isalnum() for c in text) else '"…"'

    return re.sub(r'"([^"]*)"', keep, message.replace(dsn, shown))


def classify(exc: BaseException) -> tuple[ConnectTrouble, str]:
    """The kind of a failed connection attempt and its first line of explanation."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    reason = lines[0] if lines else type(exc).__name__
    reason = reason.removeprefix("connection failed: ")
    lowered = reason.lower()
    if 'database "' in lowered and "does not exist" in lowered:
        return "database", reason
    for trouble, marks in _TROUBLE_MARKS:
        if any(mark in lowered for mark in marks):
            return trouble, reason
    return "refused", reason


async def connect(settings: PostgresSettings, *, application_name: str = "mnemogate-check") -> Conn:
    """One autocommit connection on the configured schema's search path, or PostgresConnectError."""
    db = PgDatabase(settings, application_name=application_name)
    limit = settings.connect_timeout_s + 2.0
    try:
        return await asyncio.wait_for(
            psycopg.AsyncConnection.connect(db.conninfo, **db.connection_kwargs), limit
        )
    except TimeoutError:
        raise PostgresConnectError(
            db.where, "unreachable", f"no answer within {settings.connect_timeout_s:g} s"
        ) from None
    except (psycopg.Error, OSError) as exc:
        trouble, reason = classify(exc)
        raise PostgresConnectError(db.where, trouble, reason) from None


async def probe(settings: PostgresSettings, ladders: Sequence[PgLadder] = LADDERS) -> ServerProbe:
    """Connect, read the server version and each ladder's version in the configured schema (read only)."""
    started = time.monotonic()
    conn = await connect(settings)
    try:
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return await _look(conn, settings.schema_name, ladders, started)
    except psycopg.Error as exc:
        raise PostgresUnavailableError(PgDatabase(settings).where, classify(exc)[1]) from None
    finally:
        await conn.close()


async def _look(conn: Conn, schema: str, ladders: Sequence[PgLadder], started: float) -> ServerProbe:
    row = await (
        await conn.execute(
            "SELECT current_setting('server_version'), current_database(), current_user,"
            " EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s),"
            " has_database_privilege(current_database(), 'CREATE'),"
            " EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')",
            (schema,),
        )
    ).fetchone()
    assert row is not None
    exists = bool(row[3])
    fits = []
    for ladder in ladders:
        fits.append(LadderFit(ladder.owner, await read_version(conn, ladder) if exists else 0, ladder.latest))
    return ServerProbe(
        server_version=str(row[0]),
        database=str(row[1]),
        user=str(row[2]),
        schema=schema,
        schema_exists=exists,
        may_create_schema=bool(row[4]),
        trigram_available=bool(row[5]),
        ladders=tuple(fits),
        seconds=time.monotonic() - started,
    )
