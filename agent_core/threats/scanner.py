"""Scanning text bound for a prompt: invisible unicode on the raw text, then the catalogue on its NFKC form.

Invariants: the WHOLE text is scanned (the anchor product's 64 KiB cut-off let most of a large file in
unscanned); findings come back in a stable order — invisible characters by first position, then
patterns in catalogue order — each pattern at most once; scanning never raises.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from agent_core.threats.patterns import INVISIBLE_CHARS, Scope, patterns_for

_INVISIBLE_PREFIX = "invisible_unicode_"


@dataclass(frozen=True)
class Finding:
    """One reason a text was judged unsafe for a prompt."""

    pattern_id: str
    description: str


def scan(text: str, scope: Scope) -> tuple[Finding, ...]:
    """Every threat found in ``text`` by the patterns of ``scope`` (empty tuple = safe)."""
    findings = list(_invisible_findings(text))
    normalised = unicodedata.normalize("NFKC", text)
    findings.extend(
        Finding(p.pattern_id, p.description) for p in patterns_for(scope) if p.regex.search(normalised)
    )
    return tuple(findings)


def first_threat_message(text: str, scope: Scope) -> str | None:
    """The memory-facing error for the first finding in ``text``, or None when it is safe."""
    findings = scan(text, scope)
    if not findings:
        return None
    first = findings[0]
    if first.pattern_id.startswith(_INVISIBLE_PREFIX):
        codepoint = first.pattern_id.removeprefix(_INVISIBLE_PREFIX)
        return f"Blocked: content contains invisible unicode character {codepoint} (possible injection)."
    return (
        f"Blocked: content matches threat pattern '{first.pattern_id}'. Content is injected into the "
        "system prompt and must not contain injection or exfiltration payloads."
    )


def _invisible_findings(text: str) -> list[Finding]:
    positions = {char: text.find(char) for char in INVISIBLE_CHARS}
    present = sorted((pos, char) for char, pos in positions.items() if pos >= 0)
    return [
        Finding(f"{_INVISIBLE_PREFIX}U+{ord(char):04X}", f"invisible unicode character U+{ord(char):04X}")
        for _, char in present
    ]
