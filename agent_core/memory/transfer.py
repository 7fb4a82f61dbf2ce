"""Memory documents as plain files outside the home: export every document, and read a directory for import.

Invariants: export writes each non-empty document's canonical text at ``DIR/<key>`` (the file backend's own
layout under ``memories/``), atomically, files 0600 and directories 0700, whatever backend holds them;
reading an import never raises for a bad file: each file comes back with its parsed entries or the reason it
cannot be imported (not a store of this layout, a symlink, too large, not UTF-8); entries are split as an
operator's hand edit is (on lines that are only '§', give or take spaces; stripped; empties dropped) — the
content checks and the limit are the store's (``SyncMemoryStore.set_entries``), exactly as for a write.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_core.memory.entries import salvage_entries, serialise_entries
from agent_core.memory.filestore import write_file_atomic
from agent_core.memory.layout import MemoryLayout, StoreLocation
from agent_core.storage.documents import Entries, MemoryDocuments, key_problem

MAX_IMPORT_BYTES = 1_048_576
"""Far above any limit a store can have in characters; a larger file was not meant as a memory file."""


@dataclass(frozen=True)
class ExportedDocument:
    """One document written by an export: its key, the file and how many entries it holds."""

    key: str
    path: Path
    entry_count: int
    problem: str | None
    """Why the stored text was not canonical (a hand-edited file); the export holds its parsed entries."""


@dataclass(frozen=True)
class ImportFile:
    """One file an import found: the store it fills (None: none) and its entries, or its problem."""

    key: str
    path: Path
    location: StoreLocation | None
    person_id: str | None
    entries: Entries
    problem: str | None


def export_documents(documents: MemoryDocuments, directory: Path) -> tuple[ExportedDocument, ...]:
    """Write every non-empty document under ``directory`` in the file layout; what was written, by key."""
    written: list[ExportedDocument] = []
    for key in documents.list_keys():
        contents = documents.read(key)
        if not contents.entries:
            continue
        path = directory / key
        _write_private(path, serialise_entries(contents.entries))
        written.append(ExportedDocument(key, path, len(contents.entries), contents.problem))
    return tuple(written)


def read_import(directory: Path, layout: MemoryLayout) -> tuple[ImportFile, ...]:
    """Every ``*.md`` file under ``directory`` (sorted by key) with the store it fills and its entries."""
    if not directory.is_dir():
        raise NotADirectoryError(f"{directory} is not a directory")
    found = sorted(directory.rglob("*.md"))
    return tuple(_read_one(directory, path, layout) for path in found if not _hidden(directory, path))


def _read_one(directory: Path, path: Path, layout: MemoryLayout) -> ImportFile:
    key = path.relative_to(directory).as_posix()
    resolved = layout.location_of(key)
    if resolved is None:
        reason = key_problem(key) or f"{key} is not a store under memory.isolation {layout.isolation!r}"
        return ImportFile(key, path, None, None, (), reason)
    location, person = resolved
    problem: str | None = None
    entries: Entries = ()
    if path.is_symlink() or not path.is_file():
        problem = "is not a regular file (symlinks are not followed)"
    else:
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_IMPORT_BYTES + 1)
        except OSError as exc:
            problem = f"could not be read ({exc.strerror or exc})"
        else:
            if len(raw) > MAX_IMPORT_BYTES:
                problem = f"is larger than {MAX_IMPORT_BYTES:,} bytes"
            else:
                try:
                    entries = salvage_entries(raw.decode("utf-8").replace("\r\n", "\n"))
                except UnicodeDecodeError:
                    problem = "is not valid UTF-8"
    return ImportFile(key, path, location, person, entries, problem)


def _hidden(directory: Path, path: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(directory).parts)


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_file_atomic(path, text.encode("utf-8"), f".{path.name}.")
