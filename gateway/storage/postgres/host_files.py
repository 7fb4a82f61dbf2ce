"""The host-local files of a home on the PostgreSQL backend, copied into a backup and back.

On PostgreSQL the database holds everything shared (conversations, queues, memory, skills); what stays on
each host is deployment configuration: the SOUL file, ``config.yaml`` and the workspace's context file
(the web chat's hashing key is a database row every host shares; a ``client_ids.key`` left in a home moved
from SQLite is copied too). Invariants: a backup copies each one that exists
(the context file under ``context/``); a restore writes only the SOUL file and the key, never over a
different file of the home unless forced, and never ``config.yaml`` or the context file, which name
where this host's state lives and belong to its deployment: it says where the backup's copies are.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_core.fsync import fsync_directory, fsync_file

CONFIG_FILE = "config.yaml"
KEY_FILE = "client_ids.key"
CONTEXT_DIR = "context"


@dataclass(frozen=True, slots=True)
class RestoredFiles:
    """What a restore did with each host-local file of the backup."""

    restored: tuple[str, ...]
    kept: tuple[str, ...]  # the home's own differing copy stayed (no --force)
    not_written: tuple[str, ...]  # configuration: the backup's copy is left for the operator


def copy_into_backup(home: Path, destination: Path, soul_file: str, context_file: Path | None) -> list[str]:
    """Copy the home's host-local files (and the context file) into ``destination``; their names there."""
    copied = []
    for name in (soul_file, KEY_FILE, CONFIG_FILE):
        if (home / name).is_file():
            shutil.copy2(home / name, destination / name)
            fsync_file(destination / name)
            copied.append(name)
    if context_file is not None and context_file.is_file():
        (destination / CONTEXT_DIR).mkdir(mode=0o700)
        target = destination / CONTEXT_DIR / context_file.name
        shutil.copy2(context_file, target)
        fsync_file(target)
        copied.append(f"{CONTEXT_DIR}/{context_file.name}")
    return copied


def restore_from_backup(source: Path, home: Path, files: Sequence[str], *, force: bool) -> RestoredFiles:
    """Put the backup's SOUL file and key into ``home`` (see the module docstring for which and when)."""
    restored: list[str] = []
    kept: list[str] = []
    not_written: list[str] = []
    for name in files:
        if name == CONFIG_FILE or name.startswith(CONTEXT_DIR + "/"):
            not_written.append(name)
            continue
        backup, target = source / name, home / name
        if not backup.is_file():
            continue
        if target.is_file() and filecmp.cmp(backup, target, shallow=False):
            continue
        if target.exists() and not force:
            kept.append(name)
            continue
        staging = home / f".{name}.restoring"
        shutil.copy2(backup, staging)
        fsync_file(staging)
        os.replace(staging, target)
        restored.append(name)
    if restored:
        fsync_directory(home)
    return RestoredFiles(tuple(restored), tuple(kept), tuple(not_written))
