"""Threat scanning shared by memory writes, context files, skills and provider recall.

Public surface: ``scan``/``first_threat_message`` over a ``Scope`` (ALL ⊂ CONTEXT ⊂ STRICT), the
``Finding`` they report, the read-only catalogue for inspection, and the normalised views and invisible
code-point policy the scan applies (for tests and diagnostics).
"""

from agent_core.threats.invisible import offending_code_points, suspects_removed
from agent_core.threats.patterns import PATTERNS, patterns_for
from agent_core.threats.scanner import ENCODED_PAYLOAD, Finding, first_threat_message, scan
from agent_core.threats.threat_pattern import Scope, ThreatPattern
from agent_core.threats.views import MatchViews, match_views

__all__ = [
    "ENCODED_PAYLOAD",
    "PATTERNS",
    "Finding",
    "MatchViews",
    "Scope",
    "ThreatPattern",
    "first_threat_message",
    "match_views",
    "offending_code_points",
    "patterns_for",
    "scan",
    "suspects_removed",
]
