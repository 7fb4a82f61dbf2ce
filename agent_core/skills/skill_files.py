"""The skills folder on disk (the file backend of ``SkillTexts``): ``<home>/skills/<name>/SKILL.md``, read
lock-free and written atomically.

Invariants: every mutation holds an exclusive ``fcntl.flock`` on ``skills/.lock`` and re-reads the skill
under it (so create-if-absent is exact across processes and an update never loses another), then replaces
SKILL.md via temp file + fsync + ``os.replace`` + directory fsync, so readers see a whole old or whole new
file; a delete moves the skill folder to ``skills/.deleted/`` (recoverable by an operator) instead of
erasing it; a name is validated before any path is built, so it can never leave the folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from agent_core.fsync import fsync_directory
from agent_core.skills.document import validate_name
from agent_core.skills.errors import SkillFormatError, SkillIOError

SKILL_FILE = "SKILL.md"
DELETED_DIR = ".deleted"
# Body ≤ 100,000 chars is at most ~400 KB of UTF-8; anything far larger was not written by us.
MAX_FILE_BYTES = 1_048_576


class SkillFiles:
    """``SkillTexts`` over one skills folder; safe across threads and processes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, name: str) -> Path:
        """Where skill ``name`` lives (``name`` is validated, so it cannot leave the folder)."""
        return self.root / validate_name(name) / SKILL_FILE

    def names(self) -> tuple[str, ...]:
        """Every skill folder's name, sorted (hidden folders such as ``.deleted`` excluded)."""
        try:
            entries = sorted(self.root.iterdir())
        except FileNotFoundError:
            return ()
        except OSError as exc:
            raise SkillIOError(f"skills folder {self.root} could not be listed: {exc}") from exc
        return tuple(e.name for e in entries if e.is_dir() and not e.name.startswith("."))

    def read(self, name: str) -> str | None:
        """The SKILL.md text; None when absent; SkillFormatError when too large or not UTF-8."""
        return read_skill_file(self.path_of(name))

    def write(self, name: str, apply: Callable[[str | None], str | None]) -> None:
        """``apply`` on the current text under the folder lock; write its result unless None or unchanged."""
        path = self.path_of(name)
        with self._locked():
            current = read_skill_file(path)
            text = apply(current)
            if text is not None and text != current:
                write_skill_file(path, text)

    def delete(self, name: str) -> str | None:
        """Move the skill folder to ``.deleted/``; where it went, None when there is no such skill."""
        folder = self.path_of(name).parent
        with self._locked():
            if not (folder / SKILL_FILE).is_file():
                return None
            graveyard = self.root / DELETED_DIR
            destination = graveyard / f"{name}.{time.time_ns()}"
            try:
                graveyard.mkdir(mode=0o700, exist_ok=True)
                os.replace(folder, destination)
                fsync_directory(self.root)
            except OSError as exc:
                raise SkillIOError(f"Skill '{name}' could not be deleted: {exc.strerror or exc}") from exc
            return str(destination)

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


def read_skill_file(path: Path) -> str | None:
    """A SKILL.md's text; None when absent; SkillFormatError when too large or not UTF-8."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise SkillIOError(f"{path} could not be read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise SkillFormatError(f"SKILL.md is larger than {MAX_FILE_BYTES:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillFormatError("SKILL.md is not valid UTF-8") from None


def write_skill_file(path: Path, text: str) -> None:
    """Replace the SKILL.md at ``path`` durably (temp file, fsync, rename, fsync of both folders)."""
    temp: str | None = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
