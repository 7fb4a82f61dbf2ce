"""Rendering the curated stores into the frozen prompt block, and the read-only views of each store.

Invariants: a ``MemorySnapshot`` is immutable once built — later writes never change it; every entry
is re-scanned (STRICT) at render time and a poisoned one is shown as a ``[BLOCKED: …]`` marker while
staying on disk for removal; empty stores are omitted; a damaged file renders what can be decoded and
reports the problem instead of raising.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from agent_core.memory.entries import usage_chars
from agent_core.memory.layout import StoreLocation, Target
from agent_core.memory.results import JsonValue, percent, usage_label
from agent_core.threats import Scope, scan

RULE = "═" * 46
NEARLY_FULL_NOTE = "nearly full — consolidate (merge or remove entries) before adding more"
HEADERS: Mapping[Target, str] = MappingProxyType(
    {
        Target.MEMORY: "MEMORY (your personal notes)",
        Target.USER: "USER PROFILE (who the user is)",
    }
)


def store_header(target: Target, is_admin: bool) -> str:
    """The block title for ``target``; the global title tells the model whether it may write there."""
    if target is not Target.GLOBAL:
        return HEADERS[target]
    access = "you may edit it in this conversation" if is_admin else "read-only here"
    return f"GLOBAL MEMORY (agent-wide notes for everyone; {access})"


@dataclass(frozen=True)
class StoreUsage:
    """Size of one store, and why its file needs attention (None when it is healthy)."""

    target: Target
    path: Path
    used: int
    limit: int
    entry_count: int
    problem: str | None

    @property
    def percent(self) -> int:
        """Whole-number usage percentage, capped at 100."""
        return percent(self.used, self.limit)

    @property
    def nearly_full(self) -> bool:
        """At or above 80% of the limit."""
        return self.used * 5 >= self.limit * 4


@dataclass(frozen=True)
class StoreView:
    """The live entries of one store as read from disk (for tools, the CLI and the admin API)."""

    entries: tuple[str, ...]
    usage: StoreUsage

    @classmethod
    def build(cls, location: StoreLocation, entries: tuple[str, ...], problem: str | None) -> StoreView:
        """A view of ``entries`` as found at ``location``."""
        usage = StoreUsage(
            location.target, location.path, usage_chars(entries), location.char_limit, len(entries), problem
        )
        return cls(entries, usage)

    def to_dict(self) -> dict[str, JsonValue]:
        """JSON for a model-facing read: target, entries and usage."""
        body: dict[str, JsonValue] = {
            "success": True,
            "target": self.usage.target.value,
            "entries": list(self.entries),
            "usage": usage_label(self.usage.used, self.usage.limit),
            "entry_count": self.usage.entry_count,
        }
        if self.usage.problem is not None:
            body["problem"] = f"{self.usage.path.name} {self.usage.problem}"
        return body


@dataclass(frozen=True)
class MemorySnapshot:
    """The rendered prompt block of every store visible to one person, frozen at build time."""

    text: str
    stores: tuple[StoreUsage, ...]

    @property
    def problems(self) -> tuple[str, ...]:
        """Human-readable problems of damaged files, for logs and health."""
        return tuple(f"{s.path} {s.problem}" for s in self.stores if s.problem is not None)


def render_snapshot(views: tuple[tuple[StoreLocation, StoreView], ...], is_admin: bool) -> MemorySnapshot:
    """Render every non-empty store into one frozen block (global, memory, user order as given)."""
    blocks = [
        render_block(location, view, store_header(location.target, is_admin))
        for location, view in views
        if view.entries
    ]
    return MemorySnapshot("\n\n".join(blocks), tuple(view.usage for _, view in views))


def render_block(location: StoreLocation, view: StoreView, title: str) -> str:
    """One store's block: ruled header with usage, then sanitised entries separated by '§'."""
    header = f"{title} [{usage_label(view.usage.used, view.usage.limit)}]"
    if view.usage.nearly_full:
        header = f"{header} — {NEARLY_FULL_NOTE}"
    body = "\n§\n".join(sanitise_entry(entry, location) for entry in view.entries)
    return f"{RULE}\n{header}\n{RULE}\n{body}"


def sanitise_entry(entry: str, location: StoreLocation) -> str:
    """``entry`` if it passes a STRICT scan, else the marker that replaces it in the prompt."""
    findings = scan(entry, Scope.STRICT)
    if not findings:
        return entry
    ids = ", ".join(f.pattern_id for f in findings)
    return (
        f"[BLOCKED: {location.label} entry contained threat pattern(s): {ids}. Removed from system prompt; "
        f"use memory(action=remove, target={location.target.value}) to delete the original.]"
    )
