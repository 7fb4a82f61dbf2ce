"""Making operator-supplied text (context files, SOUL.md) safe for the prompt: cap its size, then scan it.

Invariants: truncation keeps the head 70% and the tail 20% of the cap with one marker line between;
the scan (CONTEXT scope) runs AFTER truncation over the whole kept text, so nothing that enters the
prompt is unscanned; one leading BOM is dropped first (the scanner would report it as invisible
unicode); a blocked text never reaches the prompt — only a notice naming the file and pattern ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.threats import Scope, scan

HEAD_SHARE = 0.7
TAIL_SHARE = 0.2


@dataclass(frozen=True)
class ScreenedText:
    """The text to place in the prompt, and what screening did to it."""

    text: str
    original_chars: int
    omitted_chars: int
    blocked_by: tuple[str, ...]

    @property
    def blocked(self) -> bool:
        """True when the original text was replaced by a notice."""
        return bool(self.blocked_by)


def normalise(text: str) -> str:
    """One leading BOM removed, newlines unified, trailing whitespace of every line dropped, stripped."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


def omission_marker(omitted: int) -> str:
    """The line that stands where the middle of a long text was cut."""
    return f"[… {omitted:,} characters omitted …]"


def truncate_middle(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to its head 70% and tail 20% of ``limit`` when longer; returns (text, omitted chars)."""
    if len(text) <= limit:
        return text, 0
    head, tail = text[: int(limit * HEAD_SHARE)], text[len(text) - int(limit * TAIL_SHARE) :]
    omitted = len(text) - len(head) - len(tail)
    return f"{head}\n\n{omission_marker(omitted)}\n\n{tail}", omitted


def blocked_notice(label: str, pattern_ids: tuple[str, ...]) -> str:
    """What replaces a blocked file in the prompt (never any of its text)."""
    return (
        f"[BLOCKED: {label} was not loaded because it matches threat pattern(s): {', '.join(pattern_ids)}. "
        "An operator should review the file.]"
    )


def screen(text: str, label: str, limit: int) -> ScreenedText:
    """Normalise, truncate, then scan ``text``; a finding replaces it with a notice naming ``label``."""
    clean = normalise(text)
    kept, omitted = truncate_middle(clean, limit)
    findings = scan(kept, Scope.CONTEXT)
    if findings:
        ids = tuple(f.pattern_id for f in findings)
        return ScreenedText(blocked_notice(label, ids), len(clean), omitted, ids)
    return ScreenedText(kept, len(clean), omitted, ())
