"""One zip archive written entry by entry to a private temporary file beside its destination, and moved into
place only when complete.

Invariants: an existing destination is never touched unless replacing it was asked for, and then only by an
atomic rename once the new archive is whole, so a failed or interrupted export leaves no half-written file
under the destination's name (its temporary ``.<name>.*.partial`` is removed); the file is created mode 0600
(it holds personal data); one entry is open at a time, and a JSON Lines entry is written line by line, so
memory stays bounded however large an entry grows. Every method blocks (callers in async code run them in a
thread).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .errors import ExportTargetError


def to_json_text(value: Any) -> str:
    """``value`` (plain data, mappings, enums) as one line of UTF-8 JSON text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (tuple, frozenset, set)):
        return list(value)
    raise TypeError(f"cannot export a {type(value).__name__} as JSON")


def check_target(out: Path, *, force: bool) -> None:
    """Raise ExportTargetError when ``out`` exists (unless ``force``), is a directory, or has no directory."""
    if out.is_dir():
        raise ExportTargetError(f"{out} is a directory; name the archive file to write")
    if out.exists() and not force:
        raise ExportTargetError(f"{out} exists; choose another name or replace it with --force")
    if not out.parent.is_dir():
        raise ExportTargetError(f"cannot write {out}: directory {out.parent} does not exist")


class ArchiveWriter:
    """A zip archive being written to ``out`` (see the module docstring); ``finish`` moves it into place."""

    def __init__(self, out: Path, *, force: bool = False) -> None:
        check_target(out, force=force)
        try:
            handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".partial")
        except OSError as exc:
            raise ExportTargetError(f"cannot write {out}: {exc.strerror or exc}") from exc
        os.close(handle)
        self._out = out
        self._temporary = Path(temporary)
        self._zip = zipfile.ZipFile(self._temporary, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)
        self._entry: IO[bytes] | None = None
        self.names: list[str] = []

    def add_text(self, name: str, text: str) -> None:
        """One whole entry of UTF-8 text."""
        self._zip.writestr(name, text.encode("utf-8"))
        self.names.append(name)

    def add_json(self, name: str, value: Any) -> None:
        """One whole entry of pretty-printed JSON."""
        self.add_text(name, json.dumps(value, ensure_ascii=False, indent=2, default=_plain) + "\n")

    def open_lines(self, name: str) -> None:
        """Start a JSON Lines entry; ``write_lines`` adds to it until ``close_lines``."""
        if self._entry is not None:
            raise RuntimeError("another archive entry is still open")
        self._entry = self._zip.open(name, "w", force_zip64=True)
        self.names.append(name)

    def write_lines(self, values: Iterable[Any]) -> None:
        """Append each value as one JSON line to the open entry."""
        if self._entry is None:
            raise RuntimeError("no JSON Lines entry is open")
        self._entry.write("".join(to_json_text(v) + "\n" for v in values).encode("utf-8"))

    def close_lines(self) -> None:
        if self._entry is not None:
            self._entry.close()
            self._entry = None

    def finish(self) -> int:
        """Close the archive, flush it to disk and move it to its destination; its size in bytes."""
        self.close_lines()
        self._zip.close()
        with self._temporary.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(self._temporary, self._out)
        return self._out.stat().st_size

    def abort(self) -> None:
        """Drop everything written so far (the destination is left as it was)."""
        try:
            self.close_lines()
            self._zip.close()
        except (OSError, ValueError, zipfile.BadZipFile):
            pass  # the partial file is removed below whatever state the zip was left in
        self._temporary.unlink(missing_ok=True)

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:
            self.abort()
