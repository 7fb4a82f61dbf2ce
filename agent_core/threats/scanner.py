"""Scanning text bound for a prompt: invisible code points in context, then the catalogue on every view.

Invariants: the WHOLE text is scanned (the anchor product's 64 KiB cut-off let most of a large file in
unscanned); patterns see the text normalised (NFKC, case-folded, default-ignorable code points removed,
look-alike letters mapped to the letters they imitate, split-up words re-joined — see ``views``), and
readable base64/hex/percent-encoded runs are decoded and scanned the same way, to a bounded depth;
findings come back in a stable order — invisible characters by first position, then patterns in
catalogue order, then an encoded payload — each at most once; scanning never raises.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.threats.encoded import decoded_payloads
from agent_core.threats.invisible import offending_code_points
from agent_core.threats.patterns import patterns_for
from agent_core.threats.threat_pattern import Scope
from agent_core.threats.views import match_views

INVISIBLE_PREFIX = "invisible_unicode_"
ENCODED_PAYLOAD = "encoded_payload"
MAX_DECODE_DEPTH = 2


@dataclass(frozen=True)
class Finding:
    """One reason a text was judged unsafe for a prompt."""

    pattern_id: str
    description: str


def scan(text: str, scope: Scope) -> tuple[Finding, ...]:
    """Every threat found in ``text`` by the patterns of ``scope`` (empty tuple = safe)."""
    return _scan(text, scope, 0)


def first_threat_message(text: str, scope: Scope) -> str | None:
    """The memory-facing error for the first finding in ``text``, or None when it is safe."""
    findings = scan(text, scope)
    if not findings:
        return None
    first = findings[0]
    if first.pattern_id.startswith(INVISIBLE_PREFIX):
        codepoint = first.pattern_id.removeprefix(INVISIBLE_PREFIX)
        return f"Blocked: content contains invisible unicode character {codepoint} (possible injection)."
    return (
        f"Blocked: content matches threat pattern '{first.pattern_id}'. Content is injected into the "
        "system prompt and must not contain injection or exfiltration payloads."
    )


def _scan(text: str, scope: Scope, depth: int) -> tuple[Finding, ...]:
    findings = [_invisible(char) for char in offending_code_points(text)]
    views = match_views(text)
    findings.extend(Finding(p.pattern_id, p.description) for p in patterns_for(scope) if p.matches(views))
    if depth < MAX_DECODE_DEPTH:
        inner = {
            f.pattern_id: None
            for hidden in decoded_payloads(views.plain)
            for f in _scan(hidden, scope, depth + 1)
        }
        if inner:
            findings.append(Finding(ENCODED_PAYLOAD, f"encoded text that decodes to: {', '.join(inner)}"))
    return tuple(findings)


def _invisible(char: str) -> Finding:
    code = f"U+{ord(char):04X}"
    return Finding(f"{INVISIBLE_PREFIX}{code}", f"invisible unicode character {code}")
