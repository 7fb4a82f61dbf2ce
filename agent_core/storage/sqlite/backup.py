"""Online backup and offline restore of one home directory: state.db plus the curated files beside it.

Invariants: a backup's state.db is one consistent snapshot taken with SQLite's online backup API in a
single step (one read transaction, so writers in other processes carry on and nothing acknowledged before
the copy began is missing), converted to a self-contained rollback-journal file and checked with
``integrity_check`` before the manifest, written last, marks the backup complete and records every ladder's
schema version (``schema_versions`` by owner; ``schema_version``, the agent's, for older readers). A restore
never touches a home that a process has open (the write and indexer flocks are held for the whole restore
and SQLite's shared-memory "dead man switch" lock is probed), never replaces a non-empty home without
``force``, and verifies the backup before changing anything. search.db is derived and rebuilt, so it is not
copied.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from agent_core.fsync import fsync_directory, fsync_file

from ..errors import StateError
from .schema import AGENT_LADDER, Ladder, read_version
from .settings import StateSettings

MANIFEST = "mnemogate-backup.json"
MANIFEST_FORMAT = 1
COPIED_DIRS = ("memories", "skills")
# client_ids.key: the key web chat cookies and API tokens are hashed with (gateway.identity.ClientKey);
# a home restored without it would greet every browser as a stranger.
COPIED_FILES = ("SOUL.md", "config.yaml", "client_ids.key")
# Lock files and half-written temp files belong to the processes that made them, never to a backup.
_IGNORED = shutil.ignore_patterns("*.lock", ".lock", "*.tmp")
# SQLite's unix VFS keeps a shared lock on this byte of "<db>-shm" while any connection has the WAL open
# (walformat.html: the DMS lock); an exclusive probe that fails therefore means another live process.
_SHM_DMS_OFFSET = 128


class BackupError(StateError):
    """A backup or restore cannot proceed; the message says which path and why."""


class HomeInUseError(BackupError):
    """The home directory is open in a running process (gateway, worker, chat) and must not be replaced."""


@dataclass(frozen=True, slots=True)
class BackupReport:
    """What one backup or restore copied."""

    path: Path
    schema_version: int
    schema_versions: Mapping[str, int]  # by ladder owner: "agent", and "gateway" when its ladder was given
    messages: int
    files: tuple[str, ...]
    seconds: float


def backup_home(
    home: Path, destination: Path, settings: StateSettings | None = None, *, ladders: Sequence[Ladder] = ()
) -> BackupReport:
    """Copy ``home`` into the new or empty directory ``destination`` while other processes keep writing.

    The manifest records the version of the agent's ladder and of each of ``ladders`` (the gateway passes its
    own), so a restore can tell a backup from a newer mnemogate before reading the copy.
    """
    started = time.monotonic()
    settings = settings or StateSettings()
    source_db = home / settings.db_filename
    if not source_db.is_file():
        raise BackupError(f"{home} holds no {settings.db_filename}: nothing to back up")
    _prepare_empty_dir(destination)
    partial = destination / (settings.db_filename + ".partial")
    _snapshot(source_db, partial, settings.busy_timeout_ms, source_mode="rw")
    version, messages = _verify(partial)
    versions = _versions(partial, (AGENT_LADDER, *ladders))
    os.chmod(partial, 0o600)
    os.replace(partial, destination / settings.db_filename)
    files = [settings.db_filename, *_copy_curated(home, destination)]
    manifest = {
        "format": MANIFEST_FORMAT,
        "created_at": time.time(),
        "source_home": str(home),
        "db_filename": settings.db_filename,
        "schema_version": version,
        "schema_versions": versions,
        "messages": messages,
        "files": files,
    }
    _write_durably(destination / MANIFEST, json.dumps(manifest, indent=2).encode())
    fsync_directory(destination)
    return BackupReport(destination, version, versions, messages, tuple(files), time.monotonic() - started)


def restore_home(
    source: Path,
    home: Path,
    settings: StateSettings | None = None,
    *,
    force: bool = False,
    ladders: Sequence[Ladder] = (),
) -> BackupReport:
    """Replace ``home``'s state with the backup in ``source``.

    Refuses a home in use, and a non-empty home unless ``force``; verifies the backup before any change,
    including that no ladder (the agent's, then ``ladders``: the gateway passes its own) is newer there —
    by the manifest's record where it has one, before the copy is read, and by the copy itself.
    """
    started = time.monotonic()
    settings = settings or StateSettings()
    manifest = _read_manifest(source)
    every = (AGENT_LADDER, *ladders)
    _refuse_newer(source, _manifest_versions(manifest), every)
    backup_db = source / str(manifest.get("db_filename", settings.db_filename))
    if not backup_db.is_file():
        raise BackupError(f"{source} is incomplete: {backup_db.name} is missing")
    version, messages = _verify(backup_db)
    versions = _versions(backup_db, every)
    _refuse_newer(source, versions, every)
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    with exclusive_home(home, settings):
        if not force and (leftovers := _home_contents(home, settings)):
            raise BackupError(
                f"{home} is not empty ({', '.join(leftovers[:5])}); pass --force to replace its contents"
            )
        _remove_database_files(home, settings)
        target_db = home / settings.db_filename
        staging = home / (settings.db_filename + ".restoring")
        _snapshot(backup_db, staging, settings.busy_timeout_ms, source_mode="ro")
        os.replace(staging, target_db)
        files = [settings.db_filename, *_restore_curated(source, home)]
        fsync_directory(home)
    return BackupReport(home, version, versions, messages, tuple(files), time.monotonic() - started)


@contextlib.contextmanager
def exclusive_home(home: Path, settings: StateSettings | None = None) -> Iterator[None]:
    """Hold the home's write and indexer flocks, proving no process has state.db open; else HomeInUseError.

    The probe of SQLite's shared-memory lock must run in a process with no open connection to this
    database: POSIX record locks belong to the process, and closing the probe's descriptor would drop them.
    """
    settings = settings or StateSettings()
    db = home / settings.db_filename
    search = home / settings.search_filename
    lock_files = (
        (db.with_name(db.name + ".write.lock"), "a process is writing to the state database"),
        (search.with_name(search.name + ".index.lock"), "a gateway or worker holds the search indexer lock"),
    )
    with contextlib.ExitStack() as stack:
        for path, reason in lock_files:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            stack.callback(os.close, fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise HomeInUseError(f"{home} is in use: {reason}; stop mnemogate first") from None
        if _wal_in_use(db.with_name(db.name + "-shm")):
            raise HomeInUseError(f"{home} is in use: a process has {db.name} open; stop mnemogate first")
        yield


def _wal_in_use(shm: Path) -> bool:
    try:
        fd = os.open(shm, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _SHM_DMS_OFFSET, os.SEEK_SET)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EAGAIN):
            return True
        raise
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, _SHM_DMS_OFFSET, os.SEEK_SET)
    finally:
        os.close(fd)
    return False


def _snapshot(source: Path, target: Path, busy_timeout_ms: int, *, source_mode: str) -> None:
    """Copy ``source`` into a fresh ``target`` in ONE backup step, i.e. one consistent read snapshot.

    A live WAL database is opened read-write (a read-only connection cannot always map its -shm), but
    nothing is ever written to it; a finished backup is opened read-only so it may sit on a read-only mount.
    """
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    uri = f"file:{quote(str(source))}?mode={source_mode}"
    # A backup is not latency-critical: wait out a WAL recovery by another process rather than fail.
    src = sqlite3.connect(uri, uri=True, timeout=max(busy_timeout_ms, 5000) / 1000)
    try:
        dst = sqlite3.connect(target, isolation_level=None)
        try:
            src.backup(dst, pages=-1)
            # The copy inherits WAL mode; a backup is one self-contained file, with no -wal beside it.
            dst.execute("PRAGMA journal_mode=DELETE").fetchone()
        finally:
            dst.close()
    except sqlite3.Error as exc:
        raise BackupError(f"cannot copy {source} to {target}: {exc}") from exc
    finally:
        src.close()
    fsync_file(target)


def _verify(db: Path) -> tuple[int, int]:
    """(schema version, message count) of a copy that passes ``PRAGMA integrity_check``; else BackupError."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro", uri=True)
        try:
            problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check").fetchall()]
            if problems != ["ok"]:
                raise BackupError(f"{db} fails integrity_check: {'; '.join(problems[:3])}")
            version = int(conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0)
            messages = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise BackupError(f"{db} is not a usable mnemogate database: {exc}") from exc
    return version, messages


def _versions(db: Path, ladders: Sequence[Ladder]) -> dict[str, int]:
    """Each ladder's version in ``db`` by owner (the gateway's read from ``gateway_schema_version``, or from
    the shared version of a release-0.1 copy)."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro", uri=True)
        try:
            return {ladder.owner: read_version(conn, ladder) for ladder in ladders}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise BackupError(f"{db} is not a usable mnemogate database: {exc}") from exc


def _manifest_versions(manifest: Mapping[str, object]) -> dict[str, int]:
    """The versions a manifest records by owner; a manifest older than ``schema_versions`` has the agent's."""
    recorded = manifest.get("schema_versions")
    if isinstance(recorded, dict):
        return {str(owner): v for owner, v in recorded.items() if isinstance(v, int)}
    agent = manifest.get("schema_version")
    return {AGENT_LADDER.owner: agent} if isinstance(agent, int) else {}


def _refuse_newer(source: Path, versions: Mapping[str, int], ladders: Sequence[Ladder]) -> None:
    """BackupError when any ladder's version in ``versions`` is newer than this program's."""
    for ladder in ladders:
        version = versions.get(ladder.owner, 0)
        if version > ladder.latest:
            owner = "" if ladder is AGENT_LADDER else f"{ladder.owner} "
            raise BackupError(
                f"{source} has {owner}schema version {version}, newer than this mnemogate ({ladder.latest})"
            )


def _prepare_empty_dir(path: Path) -> None:
    if path.exists():
        if not path.is_dir():
            raise BackupError(f"{path} exists and is not a directory")
        if any(path.iterdir()):
            raise BackupError(f"{path} is not empty; back up into a new or empty directory")
    try:
        # The copy holds config.yaml and conversations: only the owner may read it.
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise BackupError(f"cannot create {path}: {exc.strerror}") from exc


def _copy_curated(home: Path, destination: Path) -> list[str]:
    copied = []
    for name in COPIED_DIRS:
        if (home / name).is_dir():
            shutil.copytree(home / name, destination / name, ignore=_IGNORED)
            copied.append(name + "/")
    for name in COPIED_FILES:
        if (home / name).is_file():
            shutil.copy2(home / name, destination / name)
            copied.append(name)
    return copied


def _restore_curated(source: Path, home: Path) -> list[str]:
    """memories/ and skills/ become exactly the backup's; SOUL.md and config.yaml are restored if present."""
    restored = []
    for name in COPIED_DIRS:
        staging, old = home / f".{name}.restoring", home / f".{name}.replaced"
        for leftover in (staging, old):
            shutil.rmtree(leftover, ignore_errors=True)
        if (source / name).is_dir():
            shutil.copytree(source / name, staging, ignore=_IGNORED)
            restored.append(name + "/")
        if (home / name).exists():
            os.replace(home / name, old)
        if staging.exists():
            os.replace(staging, home / name)
        shutil.rmtree(old, ignore_errors=True)
    for name in COPIED_FILES:
        if (source / name).is_file():
            staging = home / f".{name}.restoring"
            shutil.copy2(source / name, staging)
            os.replace(staging, home / name)
            restored.append(name)
    return restored


def _home_contents(home: Path, settings: StateSettings) -> list[str]:
    ours = {
        settings.db_filename + ".write.lock",
        settings.search_filename + ".index.lock",
    }
    return sorted(entry.name for entry in home.iterdir() if entry.name not in ours)


def _remove_database_files(home: Path, settings: StateSettings) -> None:
    # A stale -wal beside a replaced state.db would be replayed into it: every journal goes first.
    for base in (settings.db_filename, settings.search_filename):
        for suffix in ("-wal", "-shm", "-journal", ""):
            with contextlib.suppress(FileNotFoundError):
                (home / (base + suffix)).unlink()


def _read_manifest(source: Path) -> dict[str, object]:
    try:
        data = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BackupError(f"{source} is not a mnemogate backup (no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise BackupError(f"{source}/{MANIFEST} cannot be read: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise BackupError(f"{source}/{MANIFEST} has an unknown format")
    return data


def _write_durably(path: Path, data: bytes) -> None:
    staging = path.with_name(path.name + ".tmp")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(staging, path)
