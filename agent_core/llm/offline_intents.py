"""The offline model's phrase book: which user sentence becomes which tool call.

Pure and deterministic. Recognised (case-insensitive, optionally after "please" / "can you"):
"remember (that) X" -> memory add; "forget (that|about) X" -> memory remove on both stores;
"what do you remember / know (about me)" -> memory read of both stores;
"search (for) X" / "did we talk about X" -> session_search; "remind me in N minutes|seconds|hours to X",
"remind me at HH:MM to X" (or "remind me to X in … / at …") -> a reminder (``when`` is "in …" or "at …"),
"list my reminders" -> the reminders, "cancel reminder N" -> cancel it. Anything else is no intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Intent", "parse_intent", "strip_recall_fence"]

IntentKind = Literal["remember", "forget", "recall", "search", "remind", "reminders", "cancel_reminder"]

_PREFIX = r"^(?:(?:hey|ok|okay|so)\W+)?(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
_PATTERNS: tuple[tuple[IntentKind, re.Pattern[str]], ...] = (
    (
        "recall",
        re.compile(
            _PREFIX + r"(?:what do you (?:remember|know)\b.*|what(?:'s| is) in your memory.*"
            r"|show (?:me )?(?:your )?memor(?:y|ies).*|list (?:your )?memor(?:y|ies).*)$",
            re.IGNORECASE,
        ),
    ),
    (
        "remember",
        re.compile(
            _PREFIX + r"(?:remember|note|don't forget|do not forget)(?:\s+that)?\s*[:,]?\s+(.+)$",
            re.IGNORECASE,
        ),
    ),
    ("forget", re.compile(_PREFIX + r"forget(?:\s+(?:that|about))?\s*[:,]?\s+(.+)$", re.IGNORECASE)),
    (
        "search",
        re.compile(
            _PREFIX + r"(?:search(?:\s+(?:for|about|past conversations for|our history for))?"
            r"|did we (?:ever )?(?:talk|speak|chat) about|did we (?:ever )?discuss"
            r"|have we (?:ever )?(?:talked|spoken|chatted) about|have we (?:ever )?discussed)"
            r"\s*[:,]?\s+(.+)$",
            re.IGNORECASE,
        ),
    ),
)
_DELAY = (
    r"in\s+(?P<n>\d+(?:\.\d+)?|an?|one)\s*"
    r"(?P<unit>seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)"
)
_AT = r"at\s+(?P<at>\d{1,2}:\d{2}(?:\s*[ap]m)?|\d{1,2}\s*[ap]m)"
_ABOUT = r"(?:to|that|about)\s+"
_REMINDERS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(_PREFIX + pattern + r"$", re.IGNORECASE)
    for pattern in (
        rf"remind me\s+{_DELAY}\s+(?:{_ABOUT})?(?P<what>.+)",
        rf"remind me\s+{_AT}\s+(?:{_ABOUT})?(?P<what>.+)",
        rf"remind me\s+{_ABOUT}(?P<what>.+?)\s+{_DELAY}",
        rf"remind me\s+{_ABOUT}(?P<what>.+?)\s+{_AT}",
    )
)
_LIST_REMINDERS = re.compile(
    _PREFIX + r"(?:(?:show|list)(?: me)?(?: all)? (?:of )?my reminders|what are my reminders"
    r"|what reminders do i have)$",
    re.IGNORECASE,
)
_CANCEL_REMINDER = re.compile(
    _PREFIX + r"(?:cancel|delete|remove|stop) (?:my )?reminder\s+#?(\d+)$", re.IGNORECASE
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|mine|myself)\b", re.IGNORECASE)
# What the gateway appends to a user message's request bytes: recall, and an API client's context.
_FENCE = re.compile(r"<(memory|client)-context>.*?</\1-context>", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    subject: str = ""
    when: str = ""
    """A reminder's time: "in 10 minutes" or "at 14:30"."""

    @property
    def about_user(self) -> bool:
        """A first-person fact ("I like…", "my…") belongs in the user profile store."""
        return bool(_FIRST_PERSON.search(self.subject))


def strip_recall_fence(text: str) -> str:
    """Remove injected recall and client context so only what the user typed is interpreted."""
    return _FENCE.sub("", text).strip()


def parse_intent(text: str) -> Intent | None:
    """The intent of the newest line that has one (a coalesced message may hold several lines)."""
    lines = [line.strip() for line in strip_recall_fence(text).splitlines() if line.strip()]
    for line in reversed(lines):
        sentence = line.rstrip(" .!?")
        reminder = _reminder(sentence)
        if reminder is not None:
            return reminder
        for kind, pattern in _PATTERNS:
            found = pattern.match(sentence)
            if found:
                subject = found.group(1).strip() if pattern.groups else ""
                return Intent(kind, subject)
    return None


def _reminder(sentence: str) -> Intent | None:
    for pattern in _REMINDERS:
        found = pattern.match(sentence)
        if found is not None:
            parts = found.groupdict()
            if parts.get("at"):
                when = f"at {parts['at']}"
            else:
                count = {"a": "1", "an": "1", "one": "1"}.get(parts["n"].lower(), parts["n"])
                when = f"in {count} {parts['unit']}"
            return Intent("remind", found.group("what").strip(), when=when)
    if _LIST_REMINDERS.match(sentence):
        return Intent("reminders")
    cancelled = _CANCEL_REMINDER.match(sentence)
    return Intent("cancel_reminder", cancelled.group(1)) if cancelled else None
