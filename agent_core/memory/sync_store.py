"""The blocking memory store: validates, scans and applies writes; builds views and snapshots.

Usable from plain threads and processes (CLI, benchmarks, worker processes). Invariants: content is
stripped, delimiter-checked and threat-scanned (STRICT) BEFORE the file lock is taken; every write
re-reads the file under the lock (see ``filestore``); the admin rule and person isolation are decided
by ``layout`` before any file is touched; model-facing problems come back as ``MemoryResult``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_core.memory.entries import has_delimiter_line
from agent_core.memory.errors import InvalidTargetError, MemoryFileDriftError
from agent_core.memory.filestore import Entries, MemoryFile
from agent_core.memory.layout import MemoryLayout, StoreLocation, Target, can_write, parse_target
from agent_core.memory.operations import (
    BatchOperation,
    EntryChange,
    Plan,
    plan_add,
    plan_batch,
    plan_remove,
    plan_replace,
)
from agent_core.memory.results import MemoryResult, failed
from agent_core.memory.settings import MemorySettings
from agent_core.memory.snapshot import MemorySnapshot, StoreView, render_snapshot
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
    """Blocking facade over every curated store under one home directory."""

    def __init__(self, home: Path, settings: MemorySettings) -> None:
        self._layout = MemoryLayout(home, settings)

    @property
    def layout(self) -> MemoryLayout:
        """Where each store lives."""
        return self._layout

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

    def view(self, *, person_id: str | None, target: Target | str) -> StoreView:
        """The live entries and usage of one store (global is readable by everyone)."""
        location = self._layout.location(person_id, parse_target(target))
        return _read_view(location)

    def views(self, *, person_id: str | None) -> tuple[StoreView, ...]:
        """Every store visible to ``person_id``: global, memory, user."""
        return tuple(_read_view(loc) for loc in self._layout.locations(person_id))

    def snapshot(self, *, person_id: str | None, is_admin: bool) -> MemorySnapshot:
        """Render the frozen prompt block for ``person_id`` from the files as they are now."""
        pairs = tuple((loc, _read_view(loc)) for loc in self._layout.locations(person_id))
        snap = render_snapshot(pairs, is_admin)
        for problem in snap.problems:
            _log.warning("memory file needs repair: %s", problem)
        return snap

    def repair(self, *, person_id: str | None, target: Target | str) -> RepairReport:
        """Operator action: back up a damaged/hand-edited file and rewrite it canonically."""
        location = self._layout.location(person_id, parse_target(target))
        backup, entries = MemoryFile(location.path).rewrite_canonical()
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

        def apply(entries: Entries) -> tuple[Entries | None, Plan]:
            planned = plan(entries, location)
            return planned.new_entries, planned

        try:
            done = MemoryFile(location.path).update(apply)
        except MemoryFileDriftError as drift:
            return WriteOutcome(_drift_result(drift), resolved.value)
        return WriteOutcome(done.result, resolved.value, done.changes)


def _strip(text: str | None) -> str | None:
    return text.strip() if text is not None else None


def _content_problem(text: str) -> str | None:
    """Why ``text`` may not be stored (delimiter line or threat), or None."""
    if has_delimiter_line(text):
        return DELIMITER_ERROR
    return first_threat_message(text, Scope.STRICT)


def _read_view(location: StoreLocation) -> StoreView:
    contents = MemoryFile(location.path).read()
    return StoreView.build(location, contents.entries, contents.problem)


def _drift_result(drift: MemoryFileDriftError) -> MemoryResult:
    where = str(drift.backup) if drift.backup is not None else "(BACKUP FAILED — file unchanged on disk)"
    return MemoryResult(
        success=False,
        error=(
            f"{drift.path.name} {drift.reason}, so writing now could lose those edits. Nothing was changed; "
            f"a copy was saved to {where}."
        ),
        drift_backup=where,
        remediation=(
            "Tell the user the memory file was edited by hand and needs a repair (an operator can run "
            "`mnemogate memory` to inspect and repair it, or fix the file so entries are separated by a "
            "line containing only '§' with no trailing newline); then retry the write."
        ),
    )
