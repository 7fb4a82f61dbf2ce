"""The skills folder on disk: ``<home>/skills/<name>/SKILL.md``, read lock-free and written atomically.

Invariants: every mutation holds an exclusive ``fcntl.flock`` on ``skills/.lock`` (so create-if-absent
is exact across processes) and replaces SKILL.md via temp file + fsync + ``os.replace`` + directory
fsync, so readers see a whole old or whole new file; a delete moves the skill folder to
``skills/.deleted/`` (recoverable by an operator) instead of erasing it; a damaged SKILL.md is reported
as a problem by ``scan`` and never stops the other skills from loading.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_core.fsync import fsync_directory
from agent_core.skills.document import SkillDocument, parse, validate_name
from agent_core.skills.errors import (
    InvalidSkillNameError,
    SkillExistsError,
    SkillFormatError,
    SkillIOError,
    SkillNotFoundError,
)

SKILL_FILE = "SKILL.md"
DELETED_DIR = ".deleted"
# Body ≤ 100,000 chars is at most ~400 KB of UTF-8; anything far larger was not written by us.
MAX_FILE_BYTES = 1_048_576


@dataclass(frozen=True)
class SkillSummary:
    """What the index and ``skills_list`` show of one skill."""

    name: str
    description: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class SkillProblem:
    """A skill folder that could not be loaded, and why (for logs, health and the admin)."""

    name: str
    path: Path
    message: str


@dataclass(frozen=True)
class SkillListing:
    """Every loadable skill sorted by name, plus the folders that were skipped."""

    skills: tuple[SkillSummary, ...]
    problems: tuple[SkillProblem, ...]

    def names(self) -> tuple[str, ...]:
        """The skill names in order."""
        return tuple(s.name for s in self.skills)


class SkillFiles:
    """Blocking access to one skills folder; safe across threads and processes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, name: str) -> Path:
        """Where skill ``name`` lives (``name`` is validated, so it cannot leave the folder)."""
        return self.root / validate_name(name) / SKILL_FILE

    def read(self, name: str) -> SkillDocument:
        """The parsed skill; SkillNotFoundError / SkillFormatError / SkillIOError when it cannot be."""
        path = self.path_of(name)
        return parse(self._read_text(path, name), expected_name=name)

    def scan(self) -> SkillListing:
        """Every skill folder, parsed; damaged ones become problems."""
        skills: list[SkillSummary] = []
        problems: list[SkillProblem] = []
        for folder in self._folders():
            path = folder / SKILL_FILE
            try:
                doc = parse(self._read_text(path, folder.name), expected_name=validate_name(folder.name))
            except SkillNotFoundError:
                continue
            except (SkillFormatError, SkillIOError, InvalidSkillNameError) as exc:
                problems.append(SkillProblem(folder.name, path, str(exc)))
                continue
            skills.append(SkillSummary(doc.name, doc.description, doc.tags))
        return SkillListing(tuple(skills), tuple(problems))

    def create(self, document: SkillDocument) -> None:
        """Write a new skill; SkillExistsError if one of that name is already there."""
        path = self.path_of(document.name)
        with self._locked():
            if path.exists():
                raise SkillExistsError(
                    f"Skill '{document.name}' already exists; use action 'update' to change it."
                )
            self._write(path, document.render())

    def replace(self, name: str, document: SkillDocument) -> None:
        """Overwrite an existing skill; SkillNotFoundError if it is gone."""
        path = self.path_of(name)
        with self._locked():
            if not path.is_file():
                raise SkillNotFoundError(f"Skill '{name}' does not exist.")
            self._write(path, document.render())

    def delete(self, name: str) -> Path:
        """Move the skill folder to ``.deleted/``; returns where it went."""
        folder = self.path_of(name).parent
        with self._locked():
            if not (folder / SKILL_FILE).is_file():
                raise SkillNotFoundError(f"Skill '{name}' does not exist.")
            graveyard = self.root / DELETED_DIR
            destination = graveyard / f"{name}.{time.time_ns()}"
            try:
                graveyard.mkdir(mode=0o700, exist_ok=True)
                os.replace(folder, destination)
                fsync_directory(self.root)
            except OSError as exc:
                raise SkillIOError(f"Skill '{name}' could not be deleted: {exc.strerror or exc}") from exc
            return destination

    def _folders(self) -> list[Path]:
        try:
            entries = sorted(self.root.iterdir())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SkillIOError(f"skills folder {self.root} could not be listed: {exc}") from exc
        return [e for e in entries if e.is_dir() and not e.name.startswith(".")]

    @staticmethod
    def _read_text(path: Path, name: str) -> str:
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except (FileNotFoundError, NotADirectoryError):
            raise SkillNotFoundError(f"Skill '{name}' does not exist.") from None
        except OSError as exc:
            raise SkillIOError(f"{path} could not be read: {exc.strerror or exc}") from exc
        if len(raw) > MAX_FILE_BYTES:
            raise SkillFormatError(f"SKILL.md is larger than {MAX_FILE_BYTES:,} bytes")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillFormatError("SKILL.md is not valid UTF-8") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle = (self.root / ".lock").open("a")
        except OSError as exc:
            raise SkillIOError(f"skills folder {self.root} is not writable: {exc.strerror or exc}") from exc
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            yield

    @staticmethod
    def _write(path: Path, text: str) -> None:
        temp: str | None = None
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{SKILL_FILE}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(text.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
            temp = None
            fsync_directory(path.parent)
            fsync_directory(path.parent.parent)
        except OSError as exc:
            raise SkillIOError(f"{path} could not be written: {exc.strerror or exc}") from exc
        finally:
            if temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
