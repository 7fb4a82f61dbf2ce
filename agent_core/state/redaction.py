"""Secret redaction at the persistence boundary: common credential formats become `[REDACTED:<kind>]`.

Invariants: pure and total over `str`; one precompiled pattern scans each text once; redaction is
idempotent (a redacted text contains nothing the pattern matches); `contains_secret(t)` is True
exactly when `redact_secrets(t) != t`. Context words (`Bearer `, `password=`, quotes) are kept so the
text still reads naturally. Patterns are anchored on vendor prefixes or on an assignment to a
credential-named key, so prose, git SHAs, UUIDs and URLs pass through untouched.

Speed: every branch of the combined pattern starts with a plain literal character, which lets the
regex engine skip ahead to candidate first characters instead of trying every branch at every
position; word-boundary lookbehinds therefore sit after that first character, and case-insensitive
words get one branch per case of their first letter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

_TOKEN_TAIL: Final = r"(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}+=*+"
_CREDENTIAL_WORDS: Final = (
    "pass(?:word|wd|phrase)",
    "private[_-]?key",
    "secret",
    "api[_-]?key",
    "access[_-]?key",
    "token",
    "credentials?",
)
_NOT_TEMPLATE: Final = r"(?![$<{%\[])"  # `${API_KEY}`, `<token>`, `{{ secret }}` are references, not secrets
_VALUE: Final = (
    rf"(?:\"{_NOT_TEMPLATE}[^\"\r\n]{{16,}}+\"|'{_NOT_TEMPLATE}[^'\r\n]{{16,}}+'"
    rf"|{_NOT_TEMPLATE}[^\s\"',;&]{{16,}}+)"
)
_ASSIGNMENT_TAIL: Final = r"[\"']?\s*[:=]\s*" + _VALUE


def _either_case(word: str, tail: str, *, boundary: str = "") -> list[str]:
    """Branches for `word` (a literal first letter + regex rest) matched ASCII case-insensitively."""
    first, rest = word[0], word[1:]
    branches = []
    for letter in dict.fromkeys((first.lower(), first.upper())):
        guard = f"(?<!{boundary}{letter})" if boundary else ""
        branches.append(f"{letter}{guard}(?ai:{rest}){tail}")
    return branches


def _digit_led(tail: str) -> list[str]:
    return [f"{digit}(?<![A-Za-z0-9]{digit}){tail}" for digit in "0123456789"]


def _branches() -> Iterable[str]:
    yield (  # PEM private key: the whole block, or a pasted block cut off before its END line
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?s:.*?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:\s*+(?:Proc-Type|DEK-Info|Comment|Version):[^\r\n]*+)*+(?:\s*+[A-Za-z0-9+/=]{16,}+)*+)"
    )
    yield r"s(?<![A-Za-z0-9_-]s)k-ant-[A-Za-z0-9_-]{20,}+"
    # The digit lookahead keeps hyphenated prose ("sk-some-long-hyphenated-name") out.
    yield r"s(?<![A-Za-z0-9_-]s)k-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}+"
    yield r"s(?<![A-Za-z0-9]s)k_(?:live|test)_[A-Za-z0-9]{16,}+"
    yield r"r(?<![A-Za-z0-9]r)k_(?:live|test)_[A-Za-z0-9]{16,}+"
    yield r"x(?<![A-Za-z0-9]x)(?:ox[abposr]-[A-Za-z0-9-]{10,}+|app-[0-9]-[A-Za-z0-9-]{10,}+)"
    yield r"g(?<![A-Za-z0-9]g)(?:h[pousr]_[A-Za-z0-9]{30,}+|ithub_pat_[A-Za-z0-9_]{30,}+)"
    yield r"A(?<![A-Za-z0-9]A)(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    yield r"A(?<![A-Za-z0-9_-]A)Iza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"
    yield from _digit_led(r"[0-9]{5,11}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")
    yield r"e(?<![A-Za-z0-9_-]e)yJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"
    yield from _either_case("bearer", r"\s++" + _TOKEN_TAIL, boundary="[A-Za-z0-9_]")
    yield from _either_case(
        "authorization",
        r"[\"']?\s*[:=]\s*[\"']?(?ai:basic|token)\s++[A-Za-z0-9._~+/-]{8,}+=*+",
        boundary="[A-Za-z0-9_]",
    )
    # No left boundary: the credential word may end a longer key ("DB_PASSWORD", "clientSecret").
    for word in _CREDENTIAL_WORDS:
        yield from _either_case(word, _ASSIGNMENT_TAIL)


def _combined(branches: Iterable[str]) -> str:
    """One alternative per distinct first character (branch order kept within it), so at each position
    the engine tests a handful of literal characters before trying any branch body."""
    by_first: dict[str, list[str]] = {}
    for branch in branches:
        by_first.setdefault(branch[0], []).append(branch[1:])
    return "|".join(f"{re.escape(first)}(?:{'|'.join(rests)})" for first, rests in by_first.items())


_PATTERN: Final = re.compile(_combined(_branches()))
_ASSIGNMENT_KEY: Final = re.compile("(?ai:" + "|".join(_CREDENTIAL_WORDS) + r")[\"']?\s*[:=]\s*")
_KEEP: Final = re.compile(r"(?ai:bearer\s+|authorization[\"']?\s*[:=]\s*[\"']?(?:basic|token)\s+)")
_PREFIX_KINDS: Final[tuple[tuple[tuple[str, ...], str], ...]] = (
    (("-----BEGIN",), "private_key"),
    (("sk-ant-",), "anthropic"),
    (("sk-",), "openai"),
    (("sk_", "rk_"), "stripe"),
    (("xox", "xapp-"), "slack"),
    (("gh", "github_pat_"), "github"),
    (("AKIA", "ASIA"), "aws"),
    (("AIza",), "google"),
    (("eyJ",), "jwt"),
    (tuple("0123456789"), "telegram"),
)


def redact_secrets(text: str) -> str:
    """Return `text` with every recognised credential replaced by `[REDACTED:<kind>]`."""
    return _PATTERN.sub(_replacement, text)


def contains_secret(text: str) -> bool:
    """True when `redact_secrets` would change `text`."""
    return _PATTERN.search(text) is not None


def _vendor_kind(token: str) -> str | None:
    for prefixes, kind in _PREFIX_KINDS:
        if token.startswith(prefixes):
            return kind
    return None


def _replacement(match: re.Match[str]) -> str:
    matched = match.group()
    kind = _vendor_kind(matched)
    if kind is not None:
        return f"[REDACTED:{kind}]"
    keep = _KEEP.match(matched)
    if keep is not None:
        kind = "bearer" if matched[:1] in "bB" else "authorization"
        return f"{keep.group()}[REDACTED:{kind}]"
    return _assignment_replacement(matched)


def _assignment_replacement(matched: str) -> str:
    key = _ASSIGNMENT_KEY.match(matched)
    keep = key.group() if key is not None else ""
    rest = matched[len(keep) :]
    quote = rest[0] if rest[:1] in ("'", '"') else ""
    value = rest[len(quote) : len(rest) - len(quote)]
    kind = _vendor_kind(value) if _PATTERN.fullmatch(value) else None
    if kind is None:
        kind = "password" if keep[:4].lower() == "pass" else "secret"
    return f"{keep}{quote}[REDACTED:{kind}]{quote}"
