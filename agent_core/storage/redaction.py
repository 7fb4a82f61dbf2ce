"""Secret redaction at the persistence boundary: every recognised credential becomes `[REDACTED:<kind>]`.

Invariants: pure and total over `str`; one precompiled pattern scans each text once; redaction is
idempotent (a redacted text contains nothing the pattern matches); `contains_secret(t)` is True
exactly when `redact_secrets(t) != t`. Context words (`Bearer `, `password=`, `my password is `, the
user and host of a URL, quotes) are kept so the text still reads naturally. Which shapes count as a
credential, and why prose, code, git SHAs, UUIDs and plain URLs pass through, is `secret_patterns`' job.

Speed: every branch of the combined pattern starts with a plain literal character, which lets the
regex engine skip ahead to candidate first characters instead of trying every branch at every
position; word-led branches spell their first two letters as plain literals (one branch per case of
each) and put word-boundary lookbehinds after them, so most positions fail on a character test. Cost,
best of `python -m timeit -s "from agent_core.storage.redaction import redact_secrets as r;
t = open('README.md').read()[:500]" "r(t)"`: about 23 µs per 500-character message without secrets
(15 µs before the prose forms, 21 µs before the SendGrid, GitLab, Hugging Face, npm, DigitalOcean and
Azure formats and the path and resource-name guards). detect-secrets 1.5 was measured and not adopted:
0.3-6.6 ms for the same message, and it finds none of the prose forms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from .secret_patterns import VENDOR_PREFIX_KINDS, branches, kind_of


def _combined(branches: Iterable[str]) -> str:
    """One alternative per distinct first character (branch order kept within it), so at each position
    the engine tests a handful of literal characters before trying any branch body."""
    by_first: dict[str, list[str]] = {}
    for branch in branches:
        by_first.setdefault(branch[0], []).append(branch[1:])
    return "|".join(f"{re.escape(first)}(?:{'|'.join(rests)})" for first, rests in by_first.items())


_PATTERN: Final = re.compile(_combined(branches()))
_GENERIC_KINDS: Final = frozenset({"password", "secret"})


def redact_secrets(text: str) -> str:
    """Return `text` with every recognised credential replaced by `[REDACTED:<kind>]`."""
    return _PATTERN.sub(_replacement, text)


def contains_secret(text: str) -> bool:
    """True when `redact_secrets` would change `text`."""
    return _PATTERN.search(text) is not None


def _vendor_kind(token: str) -> str:
    for prefixes, kind in VENDOR_PREFIX_KINDS:
        if token.startswith(prefixes):
            return kind
    return "secret"  # every whole-token branch has a prefix listed; this keeps the function total


def _replacement(match: re.Match[str]) -> str:
    group = match.lastgroup  # the one value group of the branch that matched; None for a whole token
    if group is None:
        return f"[REDACTED:{_vendor_kind(match.group())}]"
    value = match.group(group)
    kind = kind_of(group)
    if kind in _GENERIC_KINDS:  # `OPENAI_API_KEY=sk-…` says more as `openai`
        inner = _PATTERN.fullmatch(value)
        kind = _vendor_kind(value) if inner is not None and inner.lastgroup is None else kind
    start, end = match.span(group)
    # The kept context (a URL's user name, the words before a value) may hold a credential of its own.
    before = redact_secrets(match.string[match.start() : start])
    return f"{before}[REDACTED:{kind}]{match.string[end : match.end()]}"
