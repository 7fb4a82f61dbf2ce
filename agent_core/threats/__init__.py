"""Threat scanning shared by memory writes, context files, skills and provider recall.

Public surface: ``scan``/``first_threat_message`` over a ``Scope`` (ALL ⊂ CONTEXT ⊂ STRICT), the
``Finding`` they report, and the read-only catalogue for inspection.
"""

from agent_core.threats.patterns import INVISIBLE_CHARS, PATTERNS, Scope, ThreatPattern, patterns_for
from agent_core.threats.scanner import Finding, first_threat_message, scan

__all__ = [
    "INVISIBLE_CHARS",
    "PATTERNS",
    "Finding",
    "Scope",
    "ThreatPattern",
    "first_threat_message",
    "patterns_for",
    "scan",
]
