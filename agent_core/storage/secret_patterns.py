"""The credential shapes redaction recognises, as regex branches that each start with a literal character.

Invariants: every branch starts with one plain literal character (so `redaction` can group branches by it
and the regex engine can skip to candidate first characters); a branch has at most one capturing group,
named `<kind>_<n>`: when it took part only the secret it captured is replaced and the rest of the match is
kept as context, otherwise (vendor formats) the whole match is the secret; no captured value can start with
`[`, so a `[REDACTED:…]` marker never matches again; every repetition a branch can retry from one start
position is bounded or possessive, so a scan stays linear in the text.

Three families: vendor formats (anchored on their prefix), assignments (`API_KEY=…`, any value of 16+
characters) and disclosures in prose (`my password is …`, `the token is …`, `aws secret key …`,
`https://user:pass@host`), where the value must also look like a credential: a password needs a digit or an
inner symbol, a token 16+ characters of letters and digits, an AWS secret 40 base64 characters of mixed
case and digits. Templates (`${X}`, `<x>`, `{{ x }}`), masks (`****`), paths, URLs and lowercase resource
names (`projects/p/secrets/db-pass/versions/3`) are never values: they say where a secret is kept.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Final

VENDOR_PREFIX_KINDS: Final[tuple[tuple[tuple[str, ...], str], ...]] = (
    (("-----BEGIN",), "private_key"),
    (("sk-ant-",), "anthropic"),
    (("sk-",), "openai"),
    (("sk_", "rk_"), "stripe"),
    (("xox", "xapp-"), "slack"),
    (("gh", "github_pat_"), "github"),
    (("AKIA", "ASIA"), "aws"),
    (("AIza",), "google"),
    (("eyJ",), "jwt"),
    (("SG.",), "sendgrid"),
    (("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-"), "gitlab"),
    (("hf_",), "huggingface"),
    (("npm_",), "npm"),
    (("dop_v1_", "doo_v1_", "dor_v1_"), "digitalocean"),
    (tuple("0123456789"), "telegram"),
)

_TOKEN_TAIL: Final = r"(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}+=*+"
_NOT_TEMPLATE: Final = r"(?![$<{%\[])"  # `${API_KEY}`, `<token>`, `{{ secret }}` are references, not secrets
_NOT_CODE: Final = r"(?![A-Za-z_][A-Za-z0-9_.]*+[(\[])"  # `getpass.getpass(…)`, `os.environ[…]`

# --- assignments: `<credential word>[:=]<value of 16+ characters>` --------------------------------------
_ASSIGNMENT_WORDS: Final = (
    ("pass(?:word|wd|phrase)", "password"),
    ("private[_-]?key", "secret"),
    ("secret", "secret"),
    ("api[_-]?key", "secret"),
    ("access[_-]?key", "secret"),
    ("token", "secret"),
    ("credentials?", "secret"),
)
_ASSIGNED: Final = r"[\"']?\s*[:=]\s*[\"'`]?+"


def _quoted_or_bare(minimum: int, bare: str, *, never_quoted: str = "", not_value: str = "") -> str:
    """A value inside the quote just consumed, or else `bare`. A quoted value takes backslash escapes whole
    (`\\"` does not end it), so redacting one never splits an escape of the JSON it may sit in. `not_value`
    is a look-ahead a quoted value must also pass."""
    guard = (f"(?!(?i:{never_quoted})[\"'`])" if never_quoted else "") + not_value
    quoted = []
    for q in ('\\"', "'", "`"):
        char = rf"(?:[^{q}\\\r\n]|\\[^\r\n])"
        run = rf"(?:[^{q}\\\r\n]++|\\[^\r\n])++"
        quoted.append(rf"(?<={q}){guard}{_NOT_TEMPLATE}(?={char}{{{minimum}}}){run}(?={q})")
    return "|".join([*quoted, rf"(?<![\"'`]){bare}"])


# A bare value never ends in a backslash: in a JSON log line that would orphan the escape of the next quote.
# A file path (with an extension, or from `~` or `.`) and a lowercase resource name of three or more
# segments (`projects/p/secrets/db-pass/versions/3`, `kv/prod/payments`) name where a secret is, not a secret.
_NOT_REFERENCE: Final = (
    r"(?!(?:(?:~|\.\.?)?/[\w./@+-]{0,256}?\.[A-Za-z][A-Za-z0-9]{0,5}|(?:~|\.\.?)/[\w./@+-]{0,256}?"
    r"|[a-z0-9_.-]{1,64}(?:/[a-z0-9_.-]{1,64}){2,16})(?![^\s\"'`,;&\\]))"
)
_ANY_VALUE: Final = _quoted_or_bare(
    16, rf"{_NOT_TEMPLATE}{_NOT_CODE}{_NOT_REFERENCE}[^\s\"'`,;&\\]{{16,}}+", not_value=_NOT_REFERENCE
)

# --- disclosures in prose: `<word> [for <up to 3 words>] <is|:|=|…> <value>` ------------------------------
_SUBJECT: Final = r"(?:\s++(?i:for|to|of|on|at|in|für|de|del|da|van|для)(?:\s++[\w@.-]{1,40}+){1,3}?)??"
_BOLD: Final = r"(?:\*\*|__)?+"  # Markdown emphasis around the word or the value, as models write it
_SAID: Final = (
    _BOLD + r"(?:[\"']?\s*+[:=]"
    r"|\s++(?i:is|was|are|equals|ist|lautet|est|es|é|è|är|это|jest|to)(?![^\W_])"
    r"(?:\s++(?i:now|still|set\s++to|changed\s++to)(?![^\W_]))?\s*+:?"
    r"|\s++(?i:(?:has\s++been\s++|was\s++)?(?:set|changed|reset|updated)\s++to)"
    r"|\s*+(?:->|[—–→])|\s++-(?=\s))"
    r"\s*+" + _BOLD + r"\s*+[\"'`]?+"
)
_PASSWORD_WORDS: Final = (  # (two literal letters + rest, needs a left word boundary)
    ("pass(?:word|wort|wd|[ -]?phrase|[ -]?code)s?", False),
    ("pwd", True),
    ("kennwort", False),
    ("mot\\s++de\\s++passe", True),
    ("contrase(?:ñ|n)a", False),
    ("clave", True),
    ("senha", True),
    ("wachtwoord", False),
    ("пароль", False),
    ("has(?:ł|l)o", True),
    ("lösenord", False),
    ("şifre", True),
)
_SECRET_WORDS: Final = (
    ("tokens?", True),
    ("secret(?:[ _-]?(?:access[ _-]?)?key)?s?", False),
    *(
        (f"{qualifier}[ _-]?keys?", True)
        for qualifier in ("api", "access", "private", "signing", "encryption")
    ),
)
_NOT_A_PASSWORD: Final = (
    r"(?![$<{%\[(*/~.=!\\])"  # templates, masks, paths, code and markers
    r"(?![A-Za-z][A-Za-z0-9+.-]*+://)"  # a URL (a password inside one has its own branch)
)
_PW_SPAN: Final = r"[^\s\"'`\\]"  # how far the shape look-aheads read
_PASSWORD: Final = _quoted_or_bare(
    4,
    _NOT_A_PASSWORD
    + _NOT_CODE
    + rf"(?={_PW_SPAN}{{4}})(?={_PW_SPAN}{{0,63}}?(?:[0-9]|[!@#$%^&*+=?~|][A-Za-z0-9]))"
    # Possessive runs; sentence punctuation and Markdown emphasis belong to it only when more of it follows,
    # and `,` `;` `&` only when neither a space nor the next `key=` of a query or config line does.
    + r"(?:[^\s\"'`,;&\\.:)\]*]++|[.:)\]*]++(?=[^\s\"'`,;&\\])"
    + r"|[,;&](?![A-Za-z0-9_]++=)(?=[^\s\"'`\\]))++",
    # Quoted type names and null-likes are schema and code, not passwords.
    never_quoted="str|string|none|null|true|false|required|optional|hidden|text",
)
_TOKEN_CHAR: Final = r"[A-Za-z0-9_\-+/=.~]"
_TOKEN: Final = (  # 16+ characters with a digit and a letter: unbroken for 16, of mixed case, or digit-dense
    r"(?![/.~=+-])(?![A-Za-z][A-Za-z0-9+.-]*+://)"
    + _NOT_CODE
    + rf"(?={_TOKEN_CHAR}{{16}})(?={_TOKEN_CHAR}{{0,63}}?[0-9])(?={_TOKEN_CHAR}{{0,63}}?[A-Za-z])"
    rf"(?:(?=[A-Za-z0-9]{{16}})|(?={_TOKEN_CHAR}{{0,63}}?[A-Z])(?={_TOKEN_CHAR}{{0,63}}?[a-z])"
    r"|(?=(?:[A-Za-z_\-+/=.~]{0,8}+[0-9]){8}))"
    rf"(?>{_TOKEN_CHAR}*[A-Za-z0-9_\-+/=~])"
)
_PIN: Final = r"[0-9]{4,12}+(?![0-9A-Za-z])"

# --- AWS secret access keys: 40 base64 characters of mixed case and digits, after `aws …` or a key id ------
_AWS_CHAR: Final = "[A-Za-z0-9/+]"
_AWS_SECRET: Final = (
    rf"(?<!{_AWS_CHAR})(?={_AWS_CHAR}{{0,39}}[0-9])(?={_AWS_CHAR}{{0,39}}[a-z])(?={_AWS_CHAR}{{0,39}}[A-Z])"
    rf"{_AWS_CHAR}{{40}}(?![A-Za-z0-9/+=])"
)
_AWS_GAP: Final = (  # `_secret_access_key=`, ` secret key is `, ` / ` (a slash that cannot start the secret)
    r"(?:[A-Za-z]{1,24}+|(?:[\s_:=,;|\"'`-]|/(?![A-Za-z0-9/+])){1,4}+){0,12}?"
)
_WORD_CHAR: Final = r"[^\W_]"


class _Captures:
    """Hands out the group names `<kind>_<n>`, unique across the one combined pattern."""

    def __init__(self) -> None:
        self._numbers = itertools.count()

    def __call__(self, kind: str, body: str) -> str:
        return f"(?P<{kind}_{next(self._numbers)}>{body})"


def kind_of(group_name: str) -> str:
    """The redaction kind a value group stands for."""
    return group_name.rpartition("_")[0]


class _Branches:
    """Builds word-led branches, each with its own value group."""

    def __init__(self) -> None:
        self.capture = _Captures()

    def worded(
        self, word: str, context: str, kind: str, value: str, *, boundary: str = "", flags: str = "ai"
    ) -> list[str]:
        """`word` (two literal letters + regex rest) in any case of its first two letters, then `context`,
        then `value` captured as `kind`. `boundary` is what must not come before the word; its guard sits
        after the two literals so most positions are rejected by a plain character test."""
        branches = []
        for first, second in itertools.product(_cases(word[0]), _cases(word[1])):
            guard = f"(?<!{boundary}..)" if boundary else ""
            rest = f"(?{flags}:{word[2:]})" if word[2:] else ""
            branches.append(f"{first}{second}{guard}{rest}{context}{self.capture(kind, value)}")
        return branches


def _cases(letter: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys((letter.lower(), letter.upper())))


def _digit_led(tail: str) -> list[str]:
    """`tail` after a first digit not preceded by a letter or digit (the guard follows a second digit)."""
    return [f"{digit}[0-9](?<![A-Za-z0-9]..){tail}" for digit in "0123456789"]


def branches() -> Iterator[str]:
    """Every branch, most specific first within each first character."""
    build = _Branches()
    yield from _vendor_branches(build)
    yield from build.worded("bearer", r"\s++", "bearer", _TOKEN_TAIL, boundary="[A-Za-z0-9_]")
    yield from build.worded("aws", r"(?![a-z])" + _AWS_GAP, "aws", _AWS_SECRET, boundary="[A-Za-z0-9]")
    # Azure storage connection strings: `…;AccountKey=<base64>;…`.
    yield from build.worded(
        "accountkey", "=", "azure", r"[A-Za-z0-9+/]{40,}+={0,2}+", boundary="[A-Za-z0-9_]"
    )
    yield from build.worded(
        "authorization",
        r"[\"']?\s*[:=]\s*[\"']?(?ai:basic|token)\s++",
        "authorization",
        r"[A-Za-z0-9._~+/-]{8,}+=*+",
        boundary="[A-Za-z0-9_]",
    )
    # No left boundary: the credential word may end a longer key ("DB_PASSWORD", "clientSecret").
    for word, kind in _ASSIGNMENT_WORDS:
        yield from build.worded(word, _ASSIGNED, kind, _ANY_VALUE)
    said = _SUBJECT + _SAID
    for word, bounded in _PASSWORD_WORDS:
        boundary = _WORD_CHAR if bounded else ""
        yield from build.worded(word, said, "password", _PASSWORD, boundary=boundary, flags="i")
    pin_said = r"(?:[ -]?(?i:code|number|nummer))?" + said
    yield from build.worded("pin", pin_said, "pin", _PIN, boundary=_WORD_CHAR)
    for word, bounded in _SECRET_WORDS:
        yield from build.worded(word, said, "secret", _TOKEN, boundary=_WORD_CHAR if bounded else "")
    # `scheme://user:password@host`: scheme, user and host are kept.
    url_password = build.capture("password", r"(?![$<{%\[*])[^\s/?#]+")
    yield r":(?<=[A-Za-z0-9+.-]:)//[^\s/?#@:]*+:" + url_password + r"@(?=[A-Za-z0-9\[])"


def _vendor_branches(build: _Branches) -> Iterator[str]:
    # PEM private key: the whole block, or a pasted block cut off before its END line (its line breaks
    # may be JSON-escaped, as in a log line). The body before END is a bounded, possessive run of what a
    # key block holds (base64, header lines, line breaks) that stops at the next `-----`, so a header
    # without END reads only as far as the next header: linear, however many headers follow.
    yield (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:(?:Proc-Type|DEK-Info|Comment|Version):[^\r\n\\\"]{0,256}+|[A-Za-z0-9+/=:,.\s]|-(?!----)"
        r"|\\[rn]){0,16384}+-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\s|\\[rn])*+(?:Proc-Type|DEK-Info|Comment|Version):[^\r\n\\\"]{0,256}+)*+"
        r"(?:(?:\s|\\[rn])*+[A-Za-z0-9+/=]{16,}+)*+)"
    )
    yield r"sk(?<![A-Za-z0-9_-]sk)-ant-[A-Za-z0-9_-]{20,}+"
    # The digit lookahead keeps hyphenated prose ("sk-some-long-hyphenated-name") out.
    yield r"sk(?<![A-Za-z0-9_-]sk)-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}+"
    yield r"sk(?<![A-Za-z0-9]sk)_(?:live|test)_[A-Za-z0-9]{16,}+"
    yield r"rk(?<![A-Za-z0-9]rk)_(?:live|test)_[A-Za-z0-9]{16,}+"
    yield r"xo(?<![A-Za-z0-9]xo)x[abposr]-[A-Za-z0-9-]{10,}+"
    yield r"xa(?<![A-Za-z0-9]xa)pp-[0-9]-[A-Za-z0-9-]{10,}+"
    yield r"gh(?<![A-Za-z0-9]gh)[pousr]_[A-Za-z0-9]{30,}+"
    yield r"gi(?<![A-Za-z0-9]gi)thub_pat_[A-Za-z0-9_]{30,}+"
    # A key id, and the secret access key when it follows within a few words (the id is then redacted
    # as the kept context of that secret).
    pair = build.capture("aws", _AWS_SECRET)
    yield rf"A[KS](?<![A-Za-z0-9]..)IA[A-Z0-9]{{16}}(?![A-Za-z0-9])(?:{_AWS_GAP}{pair})?"
    yield r"AI(?<![A-Za-z0-9_-]AI)za[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"
    yield from _digit_led(r"[0-9]{4,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")
    yield r"ey(?<![A-Za-z0-9_-]ey)J[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"
    yield r"SG(?<![A-Za-z0-9_.-]SG)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"
    yield r"gl(?<![A-Za-z0-9_-]gl)(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{20,}+"
    # Hugging Face tokens are 34 letters of mixed case (some with digits), which identifiers are not.
    yield (
        r"hf(?<![A-Za-z0-9_-]hf)_(?=[A-Za-z0-9]{0,39}[A-Z])(?=[A-Za-z0-9]{0,39}[a-z])"
        r"[A-Za-z0-9]{30,40}+(?![A-Za-z0-9_-])"
    )
    yield r"np(?<![A-Za-z0-9_-]np)m_[A-Za-z0-9]{36}(?![A-Za-z0-9_-])"
    yield r"do(?<![A-Za-z0-9_-]do)[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_-])"
