"""What ``check-config`` says about the storage: the backend, where it is, and (``--connect``) whether the
database answers and how its schema fits this program.

Invariants: nothing here writes (state.db is opened read-only, PostgreSQL is read in a read-only
transaction; neither is created or migrated); a DSN is only ever printed redacted; a database whose schema
is newer than this program is an error (``SchemaTooNewError``, exit 2), a missing or older one only a note,
since the first start creates or migrates it. Backend modules are imported only for the configured backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from agent_core.storage import StateError
from gateway.config import Home, StorageSettings


class SchemaTooNewError(StateError):
    """The database was written by a newer mnemogate than this one."""


def storage_lines(storage: StorageSettings, home: Home, *, connect: bool) -> list[str]:
    """The lines ``check-config`` prints about the storage; raises StateError subclasses on trouble."""
    if storage.backend == "postgres":
        return _postgres_lines(storage, connect=connect)
    return _sqlite_lines(storage, home, connect=connect)


def _sqlite_lines(storage: StorageSettings, home: Home, *, connect: bool) -> list[str]:
    db = home.root / storage.sqlite.db_filename
    lines = [f"  storage: sqlite ({db})"]
    if not connect:
        return lines
    from gateway.storage.sqlite.probe import latest_versions, state_versions

    found = state_versions(db)
    if found is None:
        return [
            *lines,
            f"  {db.name} does not exist yet: it will be created on first start (nothing to check)",
        ]
    return [*lines, f"  {db.name}: {_fit(db.name, found, latest_versions())}"]


def _postgres_lines(storage: StorageSettings, *, connect: bool) -> list[str]:
    from gateway.storage.postgres.probe import parse_dsn, probe

    settings = storage.postgres
    dsn = parse_dsn(settings.conninfo)
    password = "password set" if dsn.has_password else "no password in the DSN"
    lines = [
        "  storage: postgres",
        f"  dsn: {dsn.redacted} (host {dsn.host}, port {dsn.port}, database {dsn.dbname}, user {dsn.user}, "
        f"{password}); schema {settings.schema_name}; pool {settings.pool_min}-{settings.pool_max}",
    ]
    if not connect:
        return lines
    found = asyncio.run(probe(settings))
    lines.append(
        f"  server: PostgreSQL {found.server_version}, database {found.database} as {found.user} "
        f"(answered in {found.seconds * 1000:.0f} ms)"
    )
    if not found.trigram_available:
        lines.append(
            "warning: the pg_trgm extension is not available on this server (install PostgreSQL's contrib "
            "package): the first start cannot create the search indexes"
        )
    if not found.schema_exists:
        note = f"  schema {found.schema} does not exist yet: it will be created on first start"
        if not found.may_create_schema:
            note = (
                f"warning: schema {found.schema} does not exist and {found.user} may not create schemas in "
                f"database {found.database}: create it (CREATE SCHEMA {found.schema}) or GRANT CREATE"
            )
        return [*lines, note]
    versions = {fit.owner: fit.found for fit in found.ladders}
    latest = {fit.owner: fit.latest for fit in found.ladders}
    return [*lines, f"  schema {found.schema}: {_fit(f'schema {found.schema}', versions, latest)}"]


def _fit(where: str, found: Mapping[str, int], latest: Mapping[str, int]) -> str:
    """``agent v8, gateway v8: up to date``; SchemaTooNewError when any ladder is ahead of this program."""
    newer = [owner for owner, version in found.items() if version > latest[owner]]
    if newer:
        detail = ", ".join(f"{owner} v{found[owner]} (this program: v{latest[owner]})" for owner in newer)
        raise SchemaTooNewError(
            f"{where} was written by a newer mnemogate: {detail}; run the newer release, "
            "or restore a backup taken by this one"
        )
    versions = ", ".join(f"{owner} v{found[owner]}" for owner in latest)
    if all(found.get(owner, 0) == 0 for owner in latest):
        return f"{versions}: no tables yet, they will be created on first start"
    behind = [
        f"{owner} v{found.get(owner, 0)} -> v{v}" for owner, v in latest.items() if found.get(owner, 0) < v
    ]
    if behind:
        return f"{versions}: will migrate on first start ({', '.join(behind)})"
    return f"{versions}: up to date"
