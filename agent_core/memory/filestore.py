"""Memory documents as files under ``<home>/memories`` (the file backend of ``MemoryDocuments``): lock-free
reads, and locked read-modify-write with atomic, durable replace.

Invariants: a document's key is its path relative to the root and is checked before any path is built,
so no key reaches outside it; every mutation holds an exclusive ``fcntl.flock`` on the sidecar
``<file>.lock`` (the kernel drops it when a holder dies, so there are no stale locks), re-reads the file
under that lock, and replaces it via temp file + fsync + ``os.replace`` + directory fsync, so readers
always see a whole file and concurrent writers never lose an update. A file that is not the canonical
serialisation of its own entries (hand-edited, or not UTF-8) is never overwritten: it is backed up (at
most ``MAX_BACKUPS`` kept) and the write is refused. Temp files orphaned by a crashed writer are removed
by the next writer. Files are created with mode 0600.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from agent_core.fsync import fsync_directory
from agent_core.memory.entries import canonical_problem, parse_entries, salvage_entries, serialise_entries
from agent_core.memory.errors import MemoryFileDriftError, MemoryIOError
from agent_core.storage.documents import PERSON_ID, DocumentContents, Entries, check_key, key_problem

MAX_BACKUPS = 5
NOT_UTF8 = "is not valid UTF-8"

R = TypeVar("R")
FileContents = DocumentContents
"""What a lock-free read of one file found (the port's record)."""


class FileMemoryDocuments:
    """``MemoryDocuments`` as the files under one ``memories`` directory; safe across threads, processes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def file(self, key: str) -> MemoryFile:
        """The file of document ``key`` (ValueError for a key that names no document)."""
        return MemoryFile(self.root / check_key(key))

    def read(self, key: str) -> DocumentContents:
        """The document's entries; undecodable bytes are replaced and reported, never raised."""
        return self.file(key).read()

    def update(self, key: str, apply: Callable[[Entries], tuple[Entries | None, R]]) -> R:
        """``apply`` under the file's lock (see ``MemoryFile.update``)."""
        return self.file(key).update(apply)

    def repair(self, key: str) -> tuple[Path | None, Entries]:
        """Back up and canonicalise the file (see ``MemoryFile.rewrite_canonical``)."""
        return self.file(key).rewrite_canonical()

    def list_keys(self) -> tuple[str, ...]:
        """The key of every document file under the root, sorted."""
        if not self.root.is_dir():
            return ()
        candidates = [
            *self.root.glob("*.md"),
            *self.root.glob("global/*.md"),
            *self.root.glob("people/*/*.md"),
        ]
        found = (path.relative_to(self.root).as_posix() for path in candidates if path.is_file())
        return tuple(sorted(key for key in found if key_problem(key) is None))

    def forget_person(self, person_id: str) -> int:
        """Delete ``people/<person>/`` with every file in it (documents, their ``.lock`` and ``.bak.*``
        files); how many documents it held. Each file is overwritten with zeros before it is unlinked, so
        the text does not linger in blocks a later file of the home may reuse."""
        if PERSON_ID.fullmatch(person_id) is None:
            return 0
        folder = self.root / "people" / person_id
        if not folder.is_dir():
            return 0
        documents = sum(1 for path in folder.glob("*.md") if path.is_file())
        for path in sorted(folder.rglob("*"), reverse=True):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
                continue
            if path.is_file() and not path.is_symlink():
                _zero(path)
            path.unlink()
        folder.rmdir()
        fsync_directory(folder.parent)
        return documents


class MemoryFile:
    """Reads and mutates one entry file; safe across threads and processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_path = path.with_name(path.name + ".lock")
        self._temp_prefix = f".{path.name}."

    def read(self) -> FileContents:
        """The current entries; undecodable bytes are replaced for display and reported, never raised."""
        text, problem = _decode(self._read_bytes())
        return FileContents(parse_entries(text), problem)

    def update(self, apply: Callable[[Entries], tuple[Entries | None, R]]) -> R:
        """Run ``apply`` on the fresh entries under the lock; write its new entries unless None/unchanged.

        Raises MemoryFileDriftError (after backing the file up) when the file is not canonical, and
        MemoryIOError when the OS refuses a read or write; the file is then left as it was.
        """
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with self._locked():
                self._sweep_orphaned_temps()
                raw = self._read_bytes()
                entries = self._canonical_entries(raw)
                new_entries, outcome = apply(entries)
                if new_entries is not None and new_entries != entries:
                    self._write_atomic(self.path, serialise_entries(new_entries).encode("utf-8"))
                return outcome
        except OSError as exc:
            raise MemoryIOError(f"memory file {self.path} could not be updated: {exc}") from exc

    def rewrite_canonical(self) -> tuple[Path | None, Entries]:
        """Back up a non-canonical file, then rewrite it from its salvaged entries (operator repair).

        Returns the backup (None when the file was already canonical) and the entries now on disk.
        """
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with self._locked():
                raw = self._read_bytes()
                text, problem = _decode(raw)
                if problem is None:
                    return None, parse_entries(text)
                backup = self._backup(raw)
                if backup is None:
                    raise MemoryIOError(f"memory file {self.path} could not be backed up; left unchanged")
                entries = salvage_entries(text)
                self._write_atomic(self.path, serialise_entries(entries).encode("utf-8"))
                return backup, entries
        except OSError as exc:
            raise MemoryIOError(f"memory file {self.path} could not be repaired: {exc}") from exc

    def backups(self) -> list[Path]:
        """Existing backups of this file, oldest first."""
        prefix = self.path.name + ".bak."
        if not self.path.parent.is_dir():
            return []
        return sorted(p for p in self.path.parent.iterdir() if p.name.startswith(prefix))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        # A fresh open() per call gives a separate open file description, so threads of one process
        # exclude each other as well as other processes.
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise MemoryIOError(f"memory file {self.path} could not be read: {exc}") from exc

    def _canonical_entries(self, raw: bytes) -> Entries:
        text, problem = _decode(raw)
        if problem is not None:
            raise MemoryFileDriftError(self.path, problem, self._backup(raw))
        return parse_entries(text)

    def _backup(self, raw: bytes) -> Path | None:
        existing = self.backups()
        # Refusing the same drifted content again must not rotate older, different backups away.
        if existing and _same_bytes(existing[-1], raw):
            return existing[-1]
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        backup = self.path.with_name(f"{self.path.name}.bak.{stamp}")
        try:
            self._write_atomic(backup, raw)
        except OSError:
            return None
        for old in self.backups()[:-MAX_BACKUPS]:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
        return backup

    def _sweep_orphaned_temps(self) -> None:
        # Only called under the lock: no live writer of this file can own one of these.
        for candidate in self.path.parent.iterdir():
            if candidate.name.startswith(self._temp_prefix) and candidate.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    candidate.unlink()

    def _write_atomic(self, target: Path, data: bytes) -> None:
        write_file_atomic(target, data, self._temp_prefix)


def write_file_atomic(target: Path, data: bytes, temp_prefix: str) -> None:
    """Replace ``target`` by ``data`` durably: a 0600 temp file beside it, fsync, rename, directory fsync."""
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=temp_prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    fsync_directory(target.parent)


def _decode(raw: bytes) -> tuple[str, str | None]:
    """The file's text (undecodable bytes replaced) and why it is not canonical, if it is not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), NOT_UTF8
    return text, canonical_problem(text)


def _same_bytes(path: Path, raw: bytes) -> bool:
    try:
        return path.read_bytes() == raw
    except OSError:
        return False


def _zero(path: Path) -> None:
    """Overwrite the file's bytes with zeros in place and flush them (before it is unlinked)."""
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.write(bytes(size))
        handle.flush()
        os.fsync(handle.fileno())
