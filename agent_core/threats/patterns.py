"""The threat-pattern catalogue: 36 compiled patterns, each tagged with the narrowest scope that uses it.

Invariants: scopes nest (every ALL pattern is also in CONTEXT, every CONTEXT pattern also in STRICT);
every pattern is case-insensitive and anchored on a literal key word with only bounded repetition after
it (no unbounded ``.*``), so scanning a whole text of any length stays linear in its size.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class Scope(enum.Enum):
    """How much of the catalogue to apply: ALL ⊂ CONTEXT ⊂ STRICT."""

    ALL = 1
    CONTEXT = 2
    STRICT = 3

    def includes(self, other: Scope) -> bool:
        """True when a pattern tagged ``other`` is applied by a scan at this scope."""
        return other.value <= self.value


@dataclass(frozen=True)
class ThreatPattern:
    """One named regex with its scope and a human description."""

    pattern_id: str
    scope: Scope
    description: str
    regex: re.Pattern[str]


# Bounded filler between key words, as in the anchor product.
_W = r"(?:[\w'’-]+\s+){0,8}?"
_W3 = r"(?:[\w'’-]+\s+){0,3}?"
# A remote destination: a URL, an IPv4 address, a dotted host name, or an explicit C2 party.
_REMOTE = (
    r"(?:https?://|\d{1,3}(?:\.\d{1,3}){3}\b|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|xyz|ru|cn|top|"
    r"info|biz|onion|sh|me|co|dev|app|cc|tk)\b|(?:the\s+|a\s+|your\s+)?(?:c2|c&c|command(?:\s+and|\s*&)"
    r"\s+control|command\s+server|operator|controller|mothership|botnet|handler)\b)"
)
_SECRET_VAR = r"\$\{?[a-z_]*(?:key|token|secret|password|passwd|credential|api)[a-z_]*"
_AGENT_FILES = r"(?:agents\.md|claude\.md|\.cursorrules|\.clinerules|\.mnemogate\.md|soul\.md)"
_EDIT_VERBS = (
    r"\b(?:update|modify|edit|write|change|overwrite|replace|(?:append|add)\b[^\n]{0,120}?\b(?:to|into))\b"
)


def _p(pattern_id: str, scope: Scope, description: str, source: str) -> ThreatPattern:
    return ThreatPattern(pattern_id, scope, description, re.compile(source, re.IGNORECASE | re.DOTALL))


_A, _C, _S = Scope.ALL, Scope.CONTEXT, Scope.STRICT

PATTERNS: tuple[ThreatPattern, ...] = (
    # Classic injection.
    _p(
        "prompt_injection",
        _A,
        "asks to ignore previous instructions",
        rf"\bignore\s+{_W}(?:previous|all|above|prior|earlier|preceding)\s+{_W3}"
        r"(?:instructions?|prompts?|rules|directives|guidelines)\b",
    ),
    _p("sys_prompt_override", _A, "claims a system prompt override", r"\bsystem\s+prompt\s+override\b"),
    _p(
        "disregard_rules",
        _A,
        "asks to disregard the rules",
        rf"\bdisregard\s+{_W}(?:your|all|any|the|previous|prior)\s+{_W3}"
        r"(?:instructions?|rules|guidelines|directives|policies)\b",
    ),
    _p(
        "bypass_restrictions",
        _A,
        "asks to act as if unrestricted",
        r"\bact\s+as\s+(?:if|though)\s+you\s+(?:have\s+no|don'?t\s+have|do\s+not\s+have)\s+"
        rf"{_W3}(?:restrictions?|limits?|limitations?|rules|guidelines|filters?)\b",
    ),
    _p(
        "html_comment_injection",
        _A,
        "hides instructions in an HTML comment",
        # Scanning stops at the next comment opener, so total work stays linear on "<!--<!--<!--…".
        r"<!--(?=(?:(?!-->|<!--).){0,2000}?\b(?:ignore|override|system|secret|hidden)\b)",
    ),
    _p(
        "hidden_div",
        _A,
        "hides content in an invisible HTML element",
        r"<div\b(?=[^<>]{0,1000}?\bstyle\s*=)(?=[^<>]{0,1000}?display\s*:\s*none)",
    ),
    _p(
        "translate_execute",
        _A,
        "asks to translate text and execute it",
        rf"\btranslate\s+{_W}into\s+{_W}and\s+(?:then\s+)?(?:execute|run|eval|evaluate)\b",
    ),
    _p(
        "deception_hide",
        _A,
        "asks to keep something from the user",
        rf"\b(?:do\s+not|don'?t)\s+{_W}tell\s+{_W3}the\s+user\b",
    ),
    # Role-play / identity hijack.
    _p(
        "role_hijack",
        _C,
        "tries to replace the agent's identity",
        rf"\byou\s+are\s+{_W3}now\s+(?:a|an|the)\b",
    ),
    _p("role_pretend", _C, "asks the agent to pretend", rf"\bpretend\s+{_W}(?:you\s+are|to\s+be)\b"),
    _p(
        "leak_system_prompt",
        _C,
        "asks to reveal the system prompt",
        rf"\b(?:output|print|reveal|repeat|dump)\s+{_W}(?:system|initial)\s+prompt\b",
    ),
    _p(
        "remove_filters",
        _C,
        "asks to answer without safety limits",
        rf"\b(?:respond|answer|reply)\s+{_W}without\s+{_W3}"
        r"(?:restrictions?|limitations?|filters?|safety|censorship)\b",
    ),
    _p(
        "fake_update",
        _C,
        "claims the agent was reprogrammed",
        rf"\byou\s+have\s+been\s+{_W3}(?:updated|upgraded|patched|reprogrammed)\s+to\b",
    ),
    _p("identity_override", _C, "renames the agent", r"\bname\s+yourself\s+\w+"),
    # C2 / promptware. Ordinary operations vocabulary (nodes, heartbeats, task queues, reporting)
    # is only a threat when it is aimed at the agent itself or at a remote/C2 party.
    _p(
        "c2_node_registration",
        _C,
        "asks the agent to enrol itself as a node",
        r"\bregister\s+(?:yourself\s+|this\s+(?:agent|machine|host|instance|assistant)\s+)?as\s+(?:a\s+|an\s+)?"
        r"(?:new\s+)?(?:node|bot|agent|implant)\b",
    ),
    _p(
        "c2_heartbeat",
        _C,
        "asks to beacon to a remote party",
        rf"\b(?:heartbeats?|beacon(?:s|ing)?|check[\s-]?ins?)\s+(?:back\s+)?(?:to|with)\s+{_REMOTE}",
    ),
    _p(
        "c2_task_pull",
        _C,
        "asks to fetch tasks from a remote party",
        rf"\bpull(?:ing)?\s+(?:down\s+)?(?:new\s+)?task(?:s|ing)?\s+(?:from|off|at)\s+{_REMOTE}",
    ),
    _p(
        "c2_network_connect",
        _C,
        "orders the agent onto a network",
        r"\byou\s+(?:must|should|will|need\s+to|are\s+to)\s+(?:\w+\s+){0,2}?connect\s+to\s+the\s+"
        r"(?:[\w-]+\s+){0,2}?network\b"
        r"|\bconnect\s+to\s+the\s+(?:c2|botnet|command|zombie)\s+network\b",
    ),
    _p(
        "forced_action",
        _C,
        "orders the agent to contact a remote party",
        rf"\byou\s+must\s+{_W3}(?:register|connect|report|beacon)\s+(?:back\s+)?(?:to|with|in\s+to|at)\s+{_REMOTE}",
    ),
    _p("anti_forensic_oneliner", _C, "demands one-liners only", r"\bonly\s+use\s+one[\s-]?liners?\b"),
    _p(
        "anti_forensic_disk",
        _C,
        "forbids leaving files on disk",
        rf"\bnever\s+{_W}(?:create|write)\s+{_W}(?:scripts?|files?)\s+{_W}disk\b",
    ),
    _p(
        "env_var_unset_agent",
        _C,
        "unsets an agent or provider variable",
        r"\bunset\s+\w*(?:claude|codex|hermes|agent|openai|anthropic|mnemogate)\w*",
    ),
    # Known C2 frameworks. Names that are ordinary English words only count next to C2 vocabulary.
    _p(
        "known_c2_framework",
        _C,
        "names a command-and-control framework",
        r"\b(?:cobalt\s*strike|metasploit|brainworm)\b"
        r"|\b(?:sliver|havoc|mythic)\s+(?:c2|framework|implants?|teamserver|team\s+server|listeners?|"
        r"payloads?|beacons?)\b"
        r"|\b(?:c2|implant|teamserver)\s+(?:[\w-]+\s+){0,2}?(?:sliver|havoc|mythic)\b",
    ),
    _p(
        "c2_explicit",
        _C,
        "mentions C2 infrastructure",
        r"\bc2\s+(?:servers?|channels?|infrastructure|beacons?)\b",
    ),
    _p("c2_explicit_long", _C, "mentions command and control", r"\bcommand\s+(?:and|&)\s+control\b"),
    # Exfiltration.
    _p("exfil_curl", _A, "sends a secret variable with curl", rf"\bcurl\b[^\n]{{0,500}}?{_SECRET_VAR}"),
    _p("exfil_wget", _A, "sends a secret variable with wget", rf"\bwget\b[^\n]{{0,500}}?{_SECRET_VAR}"),
    _p(
        "read_secrets",
        _A,
        "reads a credentials file",
        r"\bcat\s+[^\n]{0,120}?(?:\.env\b|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc|"
        r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b)",
    ),
    _p(
        "send_to_url",
        _S,
        "sends data to a URL",
        rf"\b(?:send|post|upload|transmit|forward|exfiltrate)\s+{_W}(?:to|at)\s+https?://",
    ),
    _p(
        "context_exfil",
        _S,
        "shares the conversation or its context",
        rf"\b(?:include|output|print|share|send|dump|leak)\s+{_W}"
        r"(?:(?:conversation|chat|message)\s+(?:history|logs?|transcripts?)"
        r"|(?:previous|prior|earlier)\s+messages"
        r"|(?:full|entire|whole|complete)\s+(?:conversation|chat)\b"
        r"|(?:full|entire|whole|complete)\s+context\s+of\s+(?:this|the|our|your)\s+(?:conversation|chat|session)\b"
        r"|(?:full|entire|whole|complete)\s+context\b(?!\s+of\b))",
    ),
    # Persistence / SSH.
    _p("ssh_backdoor", _S, "touches SSH authorized_keys", r"\bauthorized_keys\b"),
    _p("ssh_access", _S, "touches the SSH directory", r"(?:\$home|\$\{home\}|~)/\.ssh\b"),
    _p(
        "hermes_env",
        _S,
        "touches the agent's secrets file",
        r"(?:\$home|\$\{home\}|~)/\.(?:hermes|mnemogate)/\.env\b",
    ),
    _p(
        "agent_config_mod",
        _S,
        "asks to modify agent instruction files",
        rf"{_EDIT_VERBS}[^\n]{{0,120}}?{_AGENT_FILES}",
    ),
    _p(
        "hermes_config_mod",
        _S,
        "asks to modify the agent's configuration",
        rf"{_EDIT_VERBS}[^\n]{{0,120}}?\.(?:hermes|mnemogate)/(?:config\.ya?ml|soul\.md)",
    ),
    _p(
        "hardcoded_secret",
        _S,
        "contains a hard-coded secret",
        r"\b(?:api[_-]?key|token|secret|password|passwd)\s*[=:]\s*[\"'][a-z0-9_\-./+=]{20,}[\"']",
    ),
)

# Zero-width and bidi-control characters that can hide or reorder text for the model.
INVISIBLE_CHARS: tuple[str, ...] = (
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\u2062",
    "\u2063",
    "\u2064",
    "\ufeff",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
)


def patterns_for(scope: Scope) -> tuple[ThreatPattern, ...]:
    """The catalogue entries a scan at ``scope`` applies, in catalogue order."""
    return tuple(p for p in PATTERNS if scope.includes(p.scope))
