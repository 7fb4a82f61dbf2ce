"""Durability of files written outside SQLite: fsync of a directory (after a rename) or a closed file.

Invariant: a directory that the filesystem cannot fsync (EINVAL/ENOTSUP on some mounts) is not an error
— the rename already happened; any other failure is raised. Never used on a live SQLite database file
(opening and closing it with plain ``open`` would cancel SQLite's POSIX locks).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["fsync_directory", "fsync_file"]


def fsync_directory(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` survive a power loss."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    """Flush a file this process wrote and closed (a backup copy, a temp file) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
