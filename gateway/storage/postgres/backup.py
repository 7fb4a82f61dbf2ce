"""``mnemogate backup``/``restore`` on PostgreSQL: ``pg_dump --format=custom`` of the configured schema and
``pg_restore`` of it, with the same manifest as SQLite backups and the home's host-local files.

Invariants: a backup is one consistent snapshot: this module opens a read-only repeatable-read
transaction, exports its snapshot, reads the ladders' versions and the message count in it, and runs
``pg_dump --snapshot`` on that same snapshot while the transaction stays open, so the manifest describes
exactly what the dump holds; the dump is checked readable (``pg_restore --list``) before the manifest,
written last, marks the backup complete. A restore verifies the manifest (no ladder newer than this
program) and the dump before it changes anything; refuses while a mnemogate process is connected to the
database; never replaces a schema that holds tables unless forced (and never ``public``: that would take
other applications' tables with it); runs ``pg_restore --single-transaction`` (all or nothing), moving the
backup's schema to the configured name when they differ; and checks the restored versions and message
count against the manifest.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import psycopg

from agent_core.fsync import fsync_directory, fsync_file
from agent_core.storage.errors import StateError
from agent_core.storage.postgres.engine import Conn
from agent_core.storage.postgres.schema import read_version
from agent_core.storage.postgres.settings import PostgresSettings

from .host_files import RestoredFiles, copy_into_backup, restore_from_backup
from .pg_tools import PgToolError, ToolTarget, require_tool, run_script, run_tool, tool_target
from .probe import LADDERS, classify, connect

MANIFEST = "mnemogate-backup.json"
MANIFEST_FORMAT = 1
DUMP_FILE = "database.dump"
BACKEND = "postgres"
ENGINE_APPLICATION = "mnemogate"  # what every pool of a running gateway or worker calls itself


def required_extensions() -> tuple[str, ...]:
    """The extensions the schema's objects use (created in ``public`` by the migrations, so a dump of one
    schema does not carry them): pg_trgm, which every open creates, and each one a ladder creates."""
    named = {"pg_trgm"}
    for ladder in LADDERS:
        for migration in ladder.migrations:
            for statement in migration.statements:
                named.update(_EXTENSION.findall(statement))
    return tuple(sorted(named))


_EXTENSION = re.compile(r"CREATE EXTENSION IF NOT EXISTS (\w+)", re.IGNORECASE)
_PLAIN = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class PgBackupError(StateError):
    """A PostgreSQL backup or restore cannot proceed; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class PgBackupReport:
    """What one backup or restore did."""

    path: Path
    schema: str
    database: str
    schema_versions: Mapping[str, int]
    messages: int
    files: tuple[str, ...]
    seconds: float
    host_files: RestoredFiles | None = None


@dataclass(frozen=True, slots=True)
class _Snapshot:
    snapshot_id: str
    taken_at: float
    server_version: str
    database: str
    versions: dict[str, int]
    messages: int


async def backup_database(
    settings: PostgresSettings, home: Path, destination: Path, *, soul_file: str, context_file: Path | None
) -> PgBackupReport:
    """Dump the configured schema into the new or empty ``destination``, beside the host-local files."""
    started = time.monotonic()
    schema = settings.schema_name
    target = tool_target(settings, application_name="mnemogate-backup")
    partial = destination / (DUMP_FILE + ".partial")
    dump_argv = ["--format=custom", f"--schema={schema}", "--no-password", f"--file={partial}"]
    pg_dump = require_tool("pg_dump", instead=["pg_dump", *dump_argv, target.dbname_arg])
    _prepare_empty_dir(destination)
    conn = await connect(settings, application_name="mnemogate-backup")
    try:
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            snap = await _snapshot(conn, schema)
            await run_tool([pg_dump, *dump_argv, f"--snapshot={snap.snapshot_id}", target.dbname_arg], target)
    except psycopg.Error as exc:
        raise PgBackupError(f"backup of schema {schema} failed: {classify(exc)[1]}") from None
    finally:
        await conn.close()
    await _check_dump(partial, schema, target, expect_messages=snap.versions.get("agent", 0) > 0)
    os.chmod(partial, 0o600)
    os.replace(partial, destination / DUMP_FILE)
    fsync_file(destination / DUMP_FILE)
    files = [DUMP_FILE, *copy_into_backup(home, destination, soul_file, context_file)]
    manifest = {
        "format": MANIFEST_FORMAT,
        "backend": BACKEND,
        "created_at": snap.taken_at,  # the server's clock at the snapshot: the dump's point in time
        "source_home": str(home),
        "database": snap.database,
        "schema": schema,
        "server_version": snap.server_version,
        "dump_file": DUMP_FILE,
        "extensions": list(required_extensions()),
        "schema_version": snap.versions.get("agent", 0),
        "schema_versions": snap.versions,
        "messages": snap.messages,
        "files": files,
    }
    _write_durably(destination / MANIFEST, json.dumps(manifest, indent=2).encode())
    fsync_directory(destination)
    return PgBackupReport(
        destination,
        schema,
        snap.database,
        snap.versions,
        snap.messages,
        tuple(files),
        time.monotonic() - started,
    )


async def _snapshot(conn: Conn, schema: str) -> _Snapshot:
    row = await (
        await conn.execute(
            "SELECT pg_export_snapshot(), extract(epoch FROM now())::double precision,"
            " current_setting('server_version'), current_database(),"
            " EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s)",
            (schema,),
        )
    ).fetchone()
    assert row is not None
    if not row[4]:
        raise PgBackupError(f"schema {schema} does not exist in database {row[3]}: nothing to back up")
    versions = {ladder.owner: await read_version(conn, ladder) for ladder in LADDERS}
    messages = 0
    if versions.get("agent", 0) > 0:
        found = await (await conn.execute("SELECT count(*) FROM messages")).fetchone()
        messages = int(found[0]) if found is not None else 0
    return _Snapshot(str(row[0]), float(row[1]), str(row[2]), str(row[3]), versions, messages)


async def _check_dump(dump: Path, schema: str, target: ToolTarget, *, expect_messages: bool) -> list[str]:
    """The dump's table of contents (``pg_restore --list``); PgBackupError when it is unreadable."""
    pg_restore = require_tool("pg_restore", instead=["pg_restore", "--list", str(dump)])
    try:
        listing = await run_tool([pg_restore, "--list", str(dump)], target)
    except PgToolError as exc:
        raise PgBackupError(f"{dump} is not a readable dump: {exc}") from None
    lines = listing.splitlines()
    if expect_messages and not any(f"TABLE DATA {schema} messages " in line for line in lines):
        raise PgBackupError(f"{dump} holds no data of {schema}.messages: not a mnemogate dump")
    return lines


async def restore_database(
    source: Path, home: Path, settings: PostgresSettings, *, force: bool
) -> PgBackupReport:
    """Restore the backup in ``source`` into the configured schema (the rules: see the module docstring)."""
    started = time.monotonic()
    manifest = read_manifest(source)
    backup_schema = str(manifest.get("schema") or "")
    versions = manifest_versions(manifest)
    _refuse_newer(source, versions)
    dump = source / str(manifest.get("dump_file", DUMP_FILE))
    if not dump.is_file():
        raise PgBackupError(f"{source} is incomplete: {dump.name} is missing")
    target = tool_target(settings, application_name="mnemogate-restore")
    schema = settings.schema_name
    toc = await _check_dump(dump, backup_schema, target, expect_messages=versions.get("agent", 0) > 0)
    script = ["--no-owner", "--no-acl", "--file=-"]
    apply = ["--single-transaction", "--set=ON_ERROR_STOP=1", "--no-psqlrc", "--quiet", "--no-password"]
    pg_restore = require_tool("pg_restore", instead=["pg_restore", *script, str(dump)])
    psql = require_tool("psql", instead=["psql", *apply, target.dbname_arg])
    conn = await connect(settings, application_name="mnemogate-restore")
    try:
        before, after = await _plan(conn, backup_schema, schema, force=force)
        recorded = manifest.get("extensions")
        listed = recorded if isinstance(recorded, list) else []
        wanted = {*required_extensions(), *(n for n in listed if isinstance(n, str) and _PLAIN.fullmatch(n))}
        creates = "".join(
            f'CREATE EXTENSION IF NOT EXISTS "{name}" WITH SCHEMA public;\n' for name in sorted(wanted)
        )
        before = creates + before
        with tempfile.TemporaryDirectory(prefix="mnemogate-restore-") as tmp:
            listing = Path(tmp) / "toc.list"
            listing.write_text("\n".join(_restorable(toc, backup_schema)) + "\n", encoding="utf-8")
            producer = [pg_restore, *script, f"--use-list={listing}", str(dump)]
            try:
                await run_script(
                    producer, [psql, *apply, target.dbname_arg], target, before=before, after=after
                )
            except PgToolError as exc:
                raise PgBackupError(
                    f"restore into schema {schema} rolled back, nothing changed: {exc}"
                ) from None
        database, found, messages = await _restored(conn, schema)
    except psycopg.Error as exc:
        raise PgBackupError(f"restore into schema {schema} failed: {classify(exc)[1]}") from None
    finally:
        await conn.close()
    if found != versions or messages != manifest.get("messages"):
        raise PgBackupError(
            f"schema {schema} after the restore holds versions {found} and {messages} messages, but the "
            f"backup recorded {versions} and {manifest.get('messages')}: check pg_restore's output"
        )
    named = manifest.get("files")
    files = [n for n in (named if isinstance(named, list) else []) if isinstance(n, str) and n != DUMP_FILE]
    restored = restore_from_backup(source, home, files, force=force)
    return PgBackupReport(
        home, schema, database, found, messages, (DUMP_FILE, *restored.restored), time.monotonic() - started,
        host_files=restored,
    )  # fmt: skip


async def _plan(conn: Conn, backup_schema: str, schema: str, *, force: bool) -> tuple[str, str]:
    """Refuse a database in use or a target with tables (unless forced); the statements that run before
    and after the restored script, in its transaction: the old target dropped, the backup's schema name
    freed if it exists (another deployment's), the restored schema renamed to the target, the name given
    back."""
    row = await (
        await conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = %s AND pid <> pg_backend_pid()",
            (ENGINE_APPLICATION,),
        )
    ).fetchone()
    if row is not None and row[0]:
        raise PgBackupError(
            f"{row[0]} connections of running mnemogate processes are open on this database: "
            "stop every gateway and worker first"
        )
    tables = await _tables(conn, schema)
    if tables and (not force or schema == "public"):
        advice = (
            "restore into a new database or a dedicated schema (storage.postgres.schema) instead: "
            "--force would take every other table of public with it"
            if schema == "public"
            else "pass --force to replace them"
        )
        raise PgBackupError(f"schema {schema} is not empty ({tables} tables); {advice}")
    if backup_schema != schema and "public" in (backup_schema, schema):
        raise PgBackupError(
            f"the backup is of schema {backup_schema}; restore it into schema {backup_schema} (set "
            f"storage.postgres.schema: {backup_schema}) or into a dedicated schema of another name"
        )
    before: list[str] = []
    after: list[str] = []
    if schema != "public":
        before.append(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE;')
    if backup_schema != schema:
        if await _exists(conn, backup_schema):
            held = f"{backup_schema[:40]}_held_{secrets.token_hex(4)}"
            before.append(f'ALTER SCHEMA "{backup_schema}" RENAME TO "{held}";')
            after.append(f'ALTER SCHEMA "{held}" RENAME TO "{backup_schema}";')
        after.insert(0, f'ALTER SCHEMA "{backup_schema}" RENAME TO "{schema}";')
    return "\n".join(before) + "\n", "\n".join(after) + "\n"


async def _tables(conn: Conn, schema: str) -> int:
    row = await (
        await conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f')",
            (schema,),
        )
    ).fetchone()
    return int(row[0]) if row is not None else 0


async def _exists(conn: Conn, schema: str) -> bool:
    row = await (await conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))).fetchone()
    return row is not None


def _restorable(toc: list[str], backup_schema: str) -> list[str]:
    """The dump's entries minus the public schema's own (it exists in every database already)."""
    if backup_schema != "public":
        return toc
    return [
        line for line in toc if " SCHEMA - public " not in line and "COMMENT - SCHEMA public " not in line
    ]


async def _restored(conn: Conn, schema: str) -> tuple[str, dict[str, int], int]:
    await conn.execute(f'SET search_path TO "{schema}", public')
    row = await (await conn.execute("SELECT current_database()")).fetchone()
    versions = {ladder.owner: await read_version(conn, ladder) for ladder in LADDERS}
    messages = 0
    if versions.get("agent", 0) > 0:
        found = await (await conn.execute("SELECT count(*) FROM messages")).fetchone()
        messages = int(found[0]) if found is not None else 0
    return (str(row[0]) if row is not None else "?"), versions, messages


def read_manifest(source: Path) -> dict[str, object]:
    """The manifest of a PostgreSQL backup in ``source``; PgBackupError for anything else."""
    try:
        data = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PgBackupError(f"{source} is not a mnemogate backup (no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise PgBackupError(f"{source}/{MANIFEST} cannot be read: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise PgBackupError(f"{source}/{MANIFEST} has an unknown format")
    if data.get("backend") != BACKEND:
        raise PgBackupError(
            f"{source} is a backup of a SQLite home (state.db), not of a PostgreSQL database: restore it "
            "with storage.backend: sqlite, then copy it over with mnemogate migrate --to postgres"
        )
    return data


def manifest_versions(manifest: Mapping[str, object]) -> dict[str, int]:
    recorded = manifest.get("schema_versions")
    if not isinstance(recorded, dict):
        return {}
    return {str(owner): v for owner, v in recorded.items() if isinstance(v, int)}


def _refuse_newer(source: Path, versions: Mapping[str, int]) -> None:
    for ladder in LADDERS:
        if versions.get(ladder.owner, 0) > ladder.latest:
            raise PgBackupError(
                f"{source} has {ladder.owner} schema version {versions[ladder.owner]}, newer than this "
                f"mnemogate ({ladder.latest}): restore it with the release that took it"
            )


def _prepare_empty_dir(path: Path) -> None:
    if path.exists():
        if not path.is_dir():
            raise PgBackupError(f"{path} exists and is not a directory")
        if any(path.iterdir()):
            raise PgBackupError(f"{path} is not empty; back up into a new or empty directory")
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)  # the copy holds conversations: owner only
    except OSError as exc:
        raise PgBackupError(f"cannot create {path}: {exc.strerror}") from exc


def _write_durably(path: Path, data: bytes) -> None:
    staging = path.with_name(path.name + ".tmp")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(staging, path)
