"""The blocking memory store: validates, scans and applies writes; builds views and snapshots.

Usable from plain threads and processes (CLI, benchmarks, worker processes). Invariants: content is
stripped, delimiter-checked and threat-scanned (STRICT) BEFORE the document is locked; every write
re-reads the document under its lock (``MemoryDocuments.update``: files under the home by default, or the
backend's rows); the admin rule and person isolation are decided by ``layout`` before any document is
touched; an import replaces a document only with entries that pass the same checks and limit; model-facing
problems come back as ``MemoryResult``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_core.memory.entries import has_delimiter_line
from agent_core.memory.errors import InvalidTargetError
from agent_core.memory.filestore import FileMemoryDocuments
from agent_core.memory.layout import MemoryLayout, StoreLocation, Target, can_write, parse_target
from agent_core.memory.operations import (
    BatchOperation,
    EntryChange,
    Plan,
    plan_add,
    plan_batch,
    plan_import,
    plan_remove,
    plan_replace,
)
from agent_core.memory.results import MemoryResult, failed
from agent_core.memory.settings import MemorySettings
from agent_core.memory.snapshot import MemorySnapshot, StoreView, render_snapshot
from agent_core.storage.documents import DocumentDriftError, Entries, MemoryDocuments
from agent_core.threats import Scope, first_threat_message

_log = logging.getLogger(__name__)

DELIMITER_ERROR = (
    "Content contains a line that is only '§', which is the entry delimiter; rephrase it without that line."
)
ADMIN_ONLY_ERROR = (
    "The global memory is shared by everyone and can only be changed in an admin's conversation. "
    "Use target 'memory' or 'user' instead."
)


@dataclass(frozen=True)
class WriteOutcome:
    """What a write did: the model-facing result and the changes to audit (empty when nothing changed)."""

    result: MemoryResult
    target: str
    changes: tuple[EntryChange, ...] = ()


@dataclass(frozen=True)
class RepairReport:
    """Result of an operator repair: the backup taken (None if the file was already fine) and entries."""

    path: Path
    backup: Path | None
    entries: Entries


class SyncMemoryStore:
    """Blocking facade over every curated store of one deployment."""

    def __init__(
        self, home: Path, settings: MemorySettings, documents: MemoryDocuments | None = None
    ) -> None:
        """``documents``: where the stores live (the storage backend's); default: the files under ``home``."""
        self._layout = MemoryLayout(home, settings)
        self._documents = documents if documents is not None else FileMemoryDocuments(self._layout.root)

    @property
    def layout(self) -> MemoryLayout:
        """Which document holds each store."""
        return self._layout

    @property
    def documents(self) -> MemoryDocuments:
        """The documents every store is read from and written to."""
        return self._documents

    def add(
        self, *, person_id: str | None, target: Target | str, content: str, is_admin: bool
    ) -> WriteOutcome:
        """Add one entry (duplicate = success no-op)."""
        text = content.strip()
        if not text:
            return WriteOutcome(failed("Content cannot be empty."), str(target))
        return self._write(person_id, target, is_admin, [text], lambda e, loc: plan_add(e, text, loc))

    def replace(
        self, *, person_id: str | None, target: Target | str, old_text: str, content: str, is_admin: bool
    ) -> WriteOutcome:
        """Replace the one entry containing ``old_text``."""
        old, new = old_text.strip(), content.strip()
        if not old:
            return WriteOutcome(failed("old_text cannot be empty."), str(target))
        if not new:
            return WriteOutcome(
                failed("new_content cannot be empty. Use 'remove' to delete entries."), str(target)
            )
        return self._write(person_id, target, is_admin, [new], lambda e, loc: plan_replace(e, old, new, loc))

    def remove(
        self, *, person_id: str | None, target: Target | str, old_text: str, is_admin: bool
    ) -> WriteOutcome:
        """Remove the one entry containing ``old_text``."""
        old = old_text.strip()
        if not old:
            return WriteOutcome(failed("old_text cannot be empty."), str(target))
        return self._write(person_id, target, is_admin, [], lambda e, loc: plan_remove(e, old, loc))

    def batch(
        self,
        *,
        person_id: str | None,
        target: Target | str,
        operations: Sequence[BatchOperation],
        is_admin: bool,
    ) -> WriteOutcome:
        """Apply ``operations`` atomically (all or nothing)."""
        if not operations:
            return WriteOutcome(failed("operations list is empty."), str(target))
        ops = [BatchOperation(op.action, _strip(op.content), _strip(op.old_text)) for op in operations]
        for position, op in enumerate(ops, start=1):
            if op.action in ("add", "replace") and op.content:
                problem = _content_problem(op.content)
                if problem is not None:
                    return WriteOutcome(failed(f"Operation {position}: {problem}"), str(target))
        return self._write(person_id, target, is_admin, [], lambda e, loc: plan_batch(e, ops, loc))

    def set_entries(self, location: StoreLocation, entries: Sequence[str], *, is_admin: bool) -> WriteOutcome:
        """Make ``location`` hold exactly ``entries`` (an import): each passes the delimiter and threat
        checks, together they fit the limit; equal entries change nothing (so importing again is a no-op)."""
        wanted = tuple(dict.fromkeys(e.strip() for e in entries if e.strip()))
        if not can_write(location.target, is_admin):
            return WriteOutcome(failed(ADMIN_ONLY_ERROR), location.target.value)
        for position, text in enumerate(wanted, start=1):
            problem = _content_problem(text)
            if problem is not None:
                return WriteOutcome(failed(f"Entry {position}: {problem}"), location.target.value)
        return self._apply(location, lambda current: plan_import(current, wanted, location))

    def view(self, *, person_id: str | None, target: Target | str) -> StoreView:
        """The live entries and usage of one store (global is readable by everyone)."""
        location = self._layout.location(person_id, parse_target(target))
        return self._read_view(location)

    def views(self, *, person_id: str | None) -> tuple[StoreView, ...]:
        """Every store visible to ``person_id``: global, memory, user."""
        return tuple(self._read_view(loc) for loc in self._layout.locations(person_id))

    def snapshot(self, *, person_id: str | None, is_admin: bool) -> MemorySnapshot:
        """Render the frozen prompt block for ``person_id`` from the documents as they are now."""
        pairs = tuple((loc, self._read_view(loc)) for loc in self._layout.locations(person_id))
        snap = render_snapshot(pairs, is_admin)
        for problem in snap.problems:
            _log.warning("memory file needs repair: %s", problem)
        return snap

    def repair(self, *, person_id: str | None, target: Target | str) -> RepairReport:
        """Operator action: back up a damaged/hand-edited file and rewrite it canonically."""
        location = self._layout.location(person_id, parse_target(target))
        backup, entries = self._documents.repair(location.key)
        return RepairReport(location.path, backup, entries)

    def _write(
        self,
        person_id: str | None,
        target: Target | str,
        is_admin: bool,
        contents: list[str],
        plan: Callable[[Entries, StoreLocation], Plan],
    ) -> WriteOutcome:
        try:
            resolved = parse_target(target)
        except InvalidTargetError as exc:
            return WriteOutcome(failed(str(exc)), str(target))
        if not can_write(resolved, is_admin):
            return WriteOutcome(failed(ADMIN_ONLY_ERROR), resolved.value)
        location = self._layout.location(person_id, resolved)
        for text in contents:
            problem = _content_problem(text)
            if problem is not None:
                return WriteOutcome(failed(problem), resolved.value)
        return self._apply(location, lambda entries: plan(entries, location))

    def _apply(self, location: StoreLocation, plan: Callable[[Entries], Plan]) -> WriteOutcome:
        def apply(entries: Entries) -> tuple[Entries | None, Plan]:
            planned = plan(entries)
            return planned.new_entries, planned

        target = location.target.value
        try:
            done = self._documents.update(location.key, apply)
        except DocumentDriftError as drift:
            return WriteOutcome(_drift_result(drift), target)
        return WriteOutcome(done.result, target, done.changes)

    def _read_view(self, location: StoreLocation) -> StoreView:
        contents = self._documents.read(location.key)
        return StoreView.build(location, contents.entries, contents.problem)


def _strip(text: str | None) -> str | None:
    return text.strip() if text is not None else None


def _content_problem(text: str) -> str | None:
    """Why ``text`` may not be stored (delimiter line or threat), or None."""
    if has_delimiter_line(text):
        return DELIMITER_ERROR
    return first_threat_message(text, Scope.STRICT)


def _drift_result(drift: DocumentDriftError) -> MemoryResult:
    where = drift.backup if drift.backup is not None else "(BACKUP FAILED — the stored text is unchanged)"
    return MemoryResult(
        success=False,
        error=(
            f"{drift.name} {drift.reason}, so writing now could lose those edits. Nothing was changed; "
            f"a copy was saved to {where}."
        ),
        drift_backup=where,
        remediation=(
            "Tell the user the memory file was edited by hand and needs a repair (an operator can run "
            "`mnemogate memory` to inspect and repair it, or fix the file so entries are separated by a "
            "line containing only '§' with no trailing newline); then retry the write."
        ),
    )
