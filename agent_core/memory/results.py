"""Model-facing results of memory operations, with the exact wording and shapes the tool returns.

Invariant: ``to_dict()`` is plain JSON (str/int/bool/list) with keys in a stable order; a success is
terminal ("done") and never echoes the entries, so models do not loop on "fixing" them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_core.memory.entries import usage_chars
from agent_core.memory.layout import StoreLocation

JsonValue = str | int | bool | list[str]

DONE_NOTE = "Write saved. This update is complete — do not repeat it."
BATCH_SUFFIX = " No operations were applied (batch is all-or-nothing)."


@dataclass(frozen=True)
class MemoryResult:
    """Outcome of one memory call; ``consolidation_failure`` feeds the per-turn breaker only."""

    success: bool
    message: str | None = None
    error: str | None = None
    done: bool | None = None
    target: str | None = None
    usage: str | None = None
    entry_count: int | None = None
    note: str | None = None
    current_entries: tuple[str, ...] | None = None
    matches: tuple[str, ...] | None = None
    drift_backup: str | None = None
    remediation: str | None = None
    consolidation_failure: bool = False

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON object handed to the model."""
        fields: list[tuple[str, JsonValue | tuple[str, ...] | None]] = [
            ("success", self.success),
            ("done", self.done),
            ("target", self.target),
            ("usage", self.usage),
            ("entry_count", self.entry_count),
            ("message", self.message),
            ("note", self.note),
            ("error", self.error),
            ("current_entries", self.current_entries),
            ("matches", self.matches),
            ("drift_backup", self.drift_backup),
            ("remediation", self.remediation),
        ]
        return {k: list(v) if isinstance(v, tuple) else v for k, v in fields if v is not None}


def percent(used: int, limit: int) -> int:
    """Whole-number usage percentage, capped at 100."""
    return min(100, int(used / limit * 100))


def usage_label(used: int, limit: int) -> str:
    """``P% — C,CCC/L,LLL chars`` as shown in headers and success results."""
    return f"{percent(used, limit)}% — {used:,}/{limit:,} chars"


def succeeded(location: StoreLocation, entries: Sequence[str], message: str) -> MemoryResult:
    """The terminal success shape."""
    return MemoryResult(
        success=True,
        done=True,
        target=location.target.value,
        usage=usage_label(usage_chars(entries), location.char_limit),
        entry_count=len(entries),
        message=message,
        note=DONE_NOTE,
    )


def failed(error: str) -> MemoryResult:
    """A plain failure that does not count toward the breaker."""
    return MemoryResult(success=False, error=error)


def consolidation_failed(
    location: StoreLocation, entries: Sequence[str], error: str, *, with_usage: bool = True
) -> MemoryResult:
    """A failure the model should fix by consolidating; counts toward the per-turn breaker."""
    used = usage_chars(entries)
    return MemoryResult(
        success=False,
        error=error,
        current_entries=tuple(entries),
        usage=f"{used:,}/{location.char_limit:,}" if with_usage else None,
        consolidation_failure=True,
    )


def ambiguous(old_text: str, matched: Sequence[str]) -> MemoryResult:
    """Several distinct entries matched; not a consolidation failure."""
    previews = tuple(m[:80] + "..." if len(m) > 80 else m for m in matched)
    return MemoryResult(
        success=False, error=f"Multiple entries matched '{old_text}'. Be more specific.", matches=previews
    )


def breaker_tripped(failures: int) -> MemoryResult:
    """The terminal result after too many consolidation failures in one turn."""
    return MemoryResult(
        success=False,
        done=True,
        error=(
            f"Memory consolidation failed {failures} times this turn. Stop retrying memory calls — leave "
            "memory unchanged for now and continue with your reply to the user. The fact can be saved in "
            "a later turn."
        ),
    )
