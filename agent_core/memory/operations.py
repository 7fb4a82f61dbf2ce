"""Add/replace/remove/batch semantics as pure plans over an entry tuple, plus the per-turn failure breaker.

Invariants: planning never touches disk (the file store runs a plan under its lock on freshly read
entries); a plan either yields the complete new entry tuple or leaves the store unchanged; a batch
is all-or-nothing with the limit checked on its final state only; exact duplicates are no-ops.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_core.memory.entries import serialise_entries, usage_chars
from agent_core.memory.layout import StoreLocation
from agent_core.memory.results import (
    BATCH_SUFFIX,
    MemoryResult,
    ambiguous,
    breaker_tripped,
    consolidation_failed,
    failed,
    succeeded,
)

Entries = tuple[str, ...]
MAX_FAILURES_PER_TURN = 3


@dataclass(frozen=True)
class EntryChange:
    """One applied change, as recorded in the audit trail."""

    action: str
    old_text: str | None
    new_text: str | None


@dataclass(frozen=True)
class Plan:
    """A planned mutation: the new entries (None = no write), the model-facing result, the changes."""

    new_entries: Entries | None
    result: MemoryResult
    changes: tuple[EntryChange, ...] = ()


@dataclass(frozen=True)
class BatchOperation:
    """One step of an atomic batch; content/old_text are already stripped by the caller."""

    action: str
    content: str | None = None
    old_text: str | None = None

    @classmethod
    def from_mapping(cls, raw: Mapping[str, object]) -> BatchOperation:
        """Build from a model-supplied JSON object; non-string fields count as missing."""

        def text(key: str) -> str | None:
            value = raw.get(key)
            return value.strip() if isinstance(value, str) else None

        action = raw.get("action")
        return cls(action if isinstance(action, str) else "", text("content"), text("old_text"))


class FailureBreaker:
    """Counts consecutive consolidation failures within one turn; after the limit, results go terminal.

    The caller owns one per turn (or calls ``start_turn`` at each turn start); thread-safe.
    """

    def __init__(self, limit: int = MAX_FAILURES_PER_TURN) -> None:
        self._limit = limit
        self._failures = 0
        self._lock = threading.Lock()

    @property
    def failures(self) -> int:
        """Consecutive consolidation failures so far this turn."""
        return self._failures

    def start_turn(self) -> None:
        """Reset at the start of a turn."""
        with self._lock:
            self._failures = 0

    def record(self, result: MemoryResult) -> MemoryResult:
        """Account for ``result`` and return what the model should see."""
        with self._lock:
            if result.success:
                self._failures = 0
            elif result.consolidation_failure:
                self._failures += 1
                if self._failures > self._limit:
                    return breaker_tripped(self._failures)
            return result


def plan_add(entries: Entries, content: str, location: StoreLocation) -> Plan:
    """Append ``content`` unless it already exists or would exceed the limit."""
    if content in entries:
        return Plan(None, succeeded(location, entries, "Entry already exists (no duplicate added)."))
    new_entries = (*entries, content)
    if usage_chars(new_entries) > location.char_limit:
        current, limit = usage_chars(entries), location.char_limit
        error = (
            f"Memory at {current:,}/{limit:,} chars. Adding this entry ({len(content)} chars) would exceed "
            "the limit. Consolidate now: use 'replace' to merge overlapping entries into shorter ones or "
            "'remove' stale or less important entries (see current_entries below), then retry this add "
            "— all in this turn."
        )
        return Plan(None, consolidation_failed(location, entries, error))
    change = EntryChange("add", None, content)
    return Plan(new_entries, succeeded(location, new_entries, "Entry added."), (change,))


def plan_replace(entries: Entries, old_text: str, content: str, location: StoreLocation) -> Plan:
    """Replace the single entry containing ``old_text`` with ``content``."""
    found = _find(entries, old_text)
    if found is None:
        return Plan(None, _no_match(entries, old_text, "replace", location))
    if isinstance(found, tuple):
        return Plan(None, ambiguous(old_text, found))
    new_entries = (*entries[:found], content, *entries[found + 1 :])
    total = usage_chars(new_entries)
    if total > location.char_limit:
        error = (
            f"Replacement would put memory at {total:,}/{location.char_limit:,} chars. Shorten the new "
            "content, or 'remove' other stale or less important entries to make room (see current_entries "
            "below), then retry — all in this turn."
        )
        return Plan(None, consolidation_failed(location, entries, error))
    change = EntryChange("replace", entries[found], content)
    return Plan(new_entries, succeeded(location, new_entries, "Entry replaced."), (change,))


def plan_remove(entries: Entries, old_text: str, location: StoreLocation) -> Plan:
    """Remove the single entry containing ``old_text``."""
    found = _find(entries, old_text)
    if found is None:
        return Plan(None, _no_match(entries, old_text, "remove", location))
    if isinstance(found, tuple):
        return Plan(None, ambiguous(old_text, found))
    new_entries = entries[:found] + entries[found + 1 :]
    change = EntryChange("remove", entries[found], None)
    return Plan(new_entries, succeeded(location, new_entries, "Entry removed."), (change,))


def plan_batch(entries: Entries, operations: Sequence[BatchOperation], location: StoreLocation) -> Plan:
    """Apply every operation to a working copy; any error or a final over-limit state applies none."""
    working = list(entries)
    changes: list[EntryChange] = []
    for position, op in enumerate(operations, start=1):
        label = f"Operation {position} ({op.action or 'missing action'})"
        error = _apply_batch_step(working, changes, op, label)
        if error is not None:
            return Plan(None, consolidation_failed(location, entries, error + BATCH_SUFFIX))
    total = usage_chars(working)
    if total > location.char_limit:
        error = (
            f"After applying all {len(operations)} operations, memory would be at {total:,}/"
            f"{location.char_limit:,} chars -- over the limit. Remove or shorten more entries in the same "
            "batch (see current_entries below), then retry."
        )
        return Plan(None, consolidation_failed(location, entries, error + BATCH_SUFFIX))
    new_entries = tuple(working)
    result = succeeded(location, new_entries, f"Applied {len(operations)} operation(s).")
    return Plan(new_entries, result, tuple(changes))


def plan_import(entries: Entries, wanted: Entries, location: StoreLocation) -> Plan:
    """Replace every entry by ``wanted`` (already checked) unless equal or over the limit; one change."""
    if wanted == entries:
        return Plan(None, succeeded(location, entries, "Unchanged (the store already holds these entries)."))
    total = usage_chars(wanted)
    if total > location.char_limit:
        error = f"The imported entries take {total:,}/{location.char_limit:,} chars -- over the limit."
        return Plan(None, failed(error))
    change = EntryChange("import", serialise_entries(entries) or None, serialise_entries(wanted) or None)
    noun = "entry" if len(wanted) == 1 else "entries"
    return Plan(wanted, succeeded(location, wanted, f"Imported {len(wanted)} {noun}."), (change,))


def _apply_batch_step(
    working: list[str], changes: list[EntryChange], op: BatchOperation, label: str
) -> str | None:
    if op.action == "add":
        if not op.content:
            return f"{label}: content is required."
        if op.content not in working:
            working.append(op.content)
            changes.append(EntryChange("add", None, op.content))
        return None
    if op.action not in ("replace", "remove"):
        return f"{label}: unknown action. Use add, replace, or remove."
    if not op.old_text:
        return f"{label}: old_text is required."
    if op.action == "replace" and not op.content:
        return f"{label}: content is required (use action='remove' to delete)."
    found = _find(tuple(working), op.old_text)
    if found is None:
        return f"{label}: no entry matched '{op.old_text}'."
    if isinstance(found, tuple):
        return f"{label}: '{op.old_text}' matched multiple distinct entries -- be more specific."
    old = working[found]
    if op.action == "replace" and op.content:
        working[found] = op.content
        changes.append(EntryChange("replace", old, op.content))
    else:
        del working[found]
        changes.append(EntryChange("remove", old, None))
    return None


def _find(entries: Entries, old_text: str) -> int | tuple[str, ...] | None:
    """Index of the entry containing ``old_text``; the distinct matches when ambiguous; None if none.

    An entry that IS ``old_text`` wins over longer ones containing it, so the exact text of an entry (what
    a person's memory view sends) always names that entry."""
    if old_text in entries:
        return entries.index(old_text)
    hits = [i for i, entry in enumerate(entries) if old_text in entry]
    if not hits:
        return None
    distinct = tuple(dict.fromkeys(entries[i] for i in hits))
    return hits[0] if len(distinct) == 1 else distinct


def _no_match(entries: Entries, old_text: str, verb: str, location: StoreLocation) -> MemoryResult:
    error = (
        f"No entry matched '{old_text}'. Check current_entries below and retry with the exact text of "
        f"the entry you want to {verb}."
    )
    return consolidation_failed(location, entries, error, with_usage=False)
