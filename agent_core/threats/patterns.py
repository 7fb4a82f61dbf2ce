"""The threat-pattern catalogue, in a fixed order, each entry tagged with the narrowest scope that uses it.

Invariants: scopes nest (every ALL pattern is also in CONTEXT, every CONTEXT pattern also in STRICT);
pattern ids are unique; catalogue order is the order findings are reported in.
"""

from __future__ import annotations

from agent_core.threats.exfiltration_patterns import EXFILTRATION_PATTERNS
from agent_core.threats.injection_patterns import INJECTION_PATTERNS
from agent_core.threats.multilingual_patterns import MULTILINGUAL_PATTERNS
from agent_core.threats.threat_pattern import Scope, ThreatPattern

PATTERNS: tuple[ThreatPattern, ...] = INJECTION_PATTERNS + MULTILINGUAL_PATTERNS + EXFILTRATION_PATTERNS


def patterns_for(scope: Scope) -> tuple[ThreatPattern, ...]:
    """The catalogue entries a scan at ``scope`` applies, in catalogue order."""
    return _BY_SCOPE[scope]


_BY_SCOPE = {scope: tuple(p for p in PATTERNS if scope.includes(p.scope)) for scope in Scope}
