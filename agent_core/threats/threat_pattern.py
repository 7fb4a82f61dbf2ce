"""The threat-pattern type, its scopes, and the regex vocabulary the catalogue is written in.

Invariants: scopes nest (ALL ⊂ CONTEXT ⊂ STRICT); every regex is written in lower case and matched
against the case-folded views, is anchored on literal key words and uses only bounded repetition
after them, so a scan stays linear in the text; ``anchors`` are substrings at least one of which every
match contains — a view holding none of them is skipped without running the regex (the corpus tests
check this); a pattern may carry a ``compact`` form (matched against the letters-only views, for
split-up key phrases) and an ``unless`` form that excuses a hit when the sentence around it matches (a
question about a thing is not an order to do it).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from agent_core.threats.views import MatchViews


class Scope(enum.Enum):
    """How much of the catalogue to apply: ALL ⊂ CONTEXT ⊂ STRICT."""

    ALL = 1
    CONTEXT = 2
    STRICT = 3

    def includes(self, other: Scope) -> bool:
        """True when a pattern tagged ``other`` is applied by a scan at this scope."""
        return other.value <= self.value


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


@dataclass(frozen=True)
class ThreatPattern:
    """One named regex with its scope and a human description (and optional compact / excuse forms)."""

    pattern_id: str
    scope: Scope
    description: str
    regex: re.Pattern[str]
    anchors: tuple[str, ...] = ()
    compact: re.Pattern[str] | None = None
    unless: re.Pattern[str] | None = None

    def matches(self, views: MatchViews) -> bool:
        """True when any view of the text shows this threat."""
        if any(self._hit(text) for text in views.texts if self.admits(text)):
            return True
        compact = self.compact
        return compact is not None and any(compact.search(t) for t in views.compacts if self.admits(t))

    def admits(self, view: str) -> bool:
        """False when ``view`` holds none of the anchors, so the regex cannot match it."""
        return not self.anchors or any(anchor in view for anchor in self.anchors)

    def _hit(self, text: str) -> bool:
        if self.unless is None:
            return self.regex.search(text) is not None
        return any(not self.unless.search(_sentence(text, m)) for m in self.regex.finditer(text))


def _sentence(text: str, match: re.Match[str]) -> str:
    """The sentence (or line) that holds ``match``, ending punctuation included; at most ±400 chars."""
    start = max(0, match.start() - 400)
    for boundary in _SENTENCE_END.finditer(text, start, match.start()):
        start = boundary.end()
    end_match = _SENTENCE_END.search(text, match.end(), match.end() + 400)
    end = end_match.end() if end_match else min(len(text), match.end() + 400)
    return text[start:end].strip()


def pattern(
    pattern_id: str,
    scope: Scope,
    description: str,
    source: str,
    anchors: str | tuple[str, ...],
    *,
    compact: str | None = None,
    unless: re.Pattern[str] | None = None,
) -> ThreatPattern:
    """A compiled catalogue entry; ``anchors`` may be given as one space-separated string."""
    return ThreatPattern(
        pattern_id,
        scope,
        description,
        re.compile(source, re.DOTALL),
        tuple(anchors.split()) if isinstance(anchors, str) else anchors,
        re.compile(compact, re.DOTALL) if compact is not None else None,
        unless,
    )


A, C, S = Scope.ALL, Scope.CONTEXT, Scope.STRICT

# Bounded filler between key words; words may be followed by light punctuation ("ignore, please, all …",
# "ignore... all"). Word and separator characters are disjoint, so a filler splits text in one way only.
SEP = r"[\s,;:.…—–]+"
W = rf"(?:[\w'’-]+{SEP}){{0,8}}?"
W3 = rf"(?:[\w'’-]+{SEP}){{0,3}}?"
# A question about a thing ("how do I add my key to authorized_keys?") is not an order to do it.
# Requests dressed as questions ("what if you …", "why not …", "could you …") are not excused.
QUESTION = re.compile(
    r"^\W*(?!what\s+if\b|why\s+(?:not|don['’]?t)\b|how\s+about\b)"
    r"(?:how|what|what['’]?s|why|where|which|when|who|is|are|does|do|did|should|shall|"
    r"(?:can|could|may|must)\s+(?:i|we))\b[^\n]*\?$"
)
# Limits an attacker wants the agent to drop.
LIMITS = (
    r"(?:rules|restrictions?|limits|limitations|guidelines|constraints|filters?|filtering|programming|"
    r"polic(?:y|ies)|ethics|morals|morality|boundaries|guardrails|censorship|safety(?:\s+\w+)?|"
    r"content\s+polic(?:y|ies))"
)
# Adjectives that describe an agent with its limits removed ("an unrestricted AI").
UNBOUND = (
    r"(?:unrestricted|unfiltered|uncensored|unshackled|unbound|unchained|amoral|unethical|lawless|"
    r"jailbroken|jailbreaked|liberated|unaligned|evil\s+(?:ai|assistant|bot|model|version|twin|confidant))"
)
# Well-known jailbreak personas and modes.
PERSONAS = (
    r"(?:dan|stan|dude|aim|mongo\s+tom|anti-?gpt|better-?dan|ucar|apophis|evil-?bot|chaos-?gpt|worm-?gpt|"
    r"freedom-?gpt|(?:evil|dark|shadow|rogue|black|fraud|omega|based|uncensored|unfiltered|unrestricted)"
    r"-?gpt|"
    r"(?:dan|developer|jailbreak|jailbroken|sudo|unrestricted|unfiltered)\s+mode)"
)
YOU_ARE = r"you(?:\s+are|['’]re)"
YOU_ARE_NOW = (
    rf"(?:\b{YOU_ARE}\s+(?:now|from\s+now\s+on|henceforth|hereby)|\bfrom\s+now\s+on,?\s+{YOU_ARE}|"
    rf"\bhenceforth,?\s+{YOU_ARE})"
)
