"""Secret redaction: every common key format is replaced, ordinary text is left exactly as written."""

from __future__ import annotations

import string
import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agent_core.storage.redaction import contains_secret, redact_secrets

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)

REDACTED = [
    ("key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_AbC-dEf end", "key [REDACTED:openai] end"),
    ("sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAbCdEfGhIjKlMnOp", "[REDACTED:openai]"),
    ("sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z-AbCdEfG_hIj", "[REDACTED:anthropic]"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[REDACTED:slack]"),
    ("xoxp-1234567890-1234567890-abcdefabcdef", "[REDACTED:slack]"),
    ("xapp-1-A0123456789-1234567890123-abcdef0123456789", "[REDACTED:slack]"),
    ("use ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAbCd please", "use [REDACTED:github] please"),
    ("gho_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAbCd", "[REDACTED:github]"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "[REDACTED:github]"),
    ("AKIAIOSFODNN7EXAMPLE and ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws] and [REDACTED:aws]"),
    ("maps key AIzaSyA1234567890abcdefghijklmnopqrstuv.", "maps key [REDACTED:google]."),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 here", "bot [REDACTED:telegram] here"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe]"),
    ("rk_live_51H8abcdefghijklmnop1234", "[REDACTED:stripe]"),
    ("Authorization: Bearer abcdef0123456789abcdef.ghij", "Authorization: Bearer [REDACTED:bearer]"),
    (
        "curl -H 'authorization: bearer 0123456789abcdefABCDEF'",
        "curl -H 'authorization: bearer [REDACTED:bearer]'",
    ),
    (f"token {JWT} expired", "token [REDACTED:jwt] expired"),
    (f"Authorization: Bearer {JWT}", "Authorization: Bearer [REDACTED:bearer]"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:authorization]"),
    (f"here:\n{PEM}\nthanks", "here:\n[REDACTED:private_key]\nthanks"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n",
        "[REDACTED:private_key]\n",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nabc\n-----END PGP PRIVATE KEY BLOCK-----",
        "[REDACTED:private_key]",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n"
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
        "-----END RSA PRIVATE KEY----- then",
        "[REDACTED:private_key] then",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n"
        "Comment: https://gpgtools.org <me@x.org>\n\n"
        "lQOYBF1234abcdABCD\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\nbye",
        "[REDACTED:private_key]\nbye",
    ),
    (f"one {PEM} and two {PEM}.", "one [REDACTED:private_key] and two [REDACTED:private_key]."),
    (
        '{"m": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0B\\n-----END PRIVATE KEY-----"}',
        '{"m": "[REDACTED:private_key]"}',
    ),
    (
        "sendgrid: 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 ok",
        "sendgrid: [REDACTED:sendgrid] ok",
    ),
    ("GitLab token glpat-u47ctfYP4U5cDmhbQ0-3", "GitLab token [REDACTED:gitlab]"),
    (
        "https://oauth2:glpat-a1B2c3D4e5F6g7H8i9J0@gitlab.com/x/y.git",
        "https://oauth2:[REDACTED:gitlab]@gitlab.com/x/y.git",
    ),
    ("HF hf_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7 done", "HF [REDACTED:huggingface] done"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "[REDACTED:huggingface]"),
    (
        "//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "//registry.npmjs.org/:_authToken=[REDACTED:npm]",
    ),
    ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "[REDACTED:npm]"),
    (
        "DO token dop_v1_f8972bc289b083d37221d0b858a2ab23c7f1db65ca97db06c6336867bfc2cfac",
        "DO token [REDACTED:digitalocean]",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=myacct;"
        "AccountKey=uuCkEfkCX03GzaW3tO6pWAxztWhn5choLnP9GuIWSOdYtaIhpXMdYcsxZ4aPZy1hLkIyhdONqSfeaVUwBaUOPYWtHA==;"
        "EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey=[REDACTED:azure];"
        "EndpointSuffix=core.windows.net",
    ),
    ("password=hunter2hunter2hunter2", "password=[REDACTED:password]"),
    ("password: hunter2", "password: [REDACTED:password]"),
    ('api_key: "abcdefghijklmnop1234"', 'api_key: "[REDACTED:secret]"'),
    ('{"clientSecret": "zzzzzzzzzzzzzzzzzzzz"}', '{"clientSecret": "[REDACTED:secret]"}'),
    ("DB_PASSWORD='correct horse battery staple'", "DB_PASSWORD='[REDACTED:password]'"),
    ("X-Api-Key: abcdef0123456789abcdef", "X-Api-Key: [REDACTED:secret]"),
    ("OPENAI_API_KEY=sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "OPENAI_API_KEY=[REDACTED:openai]"),
    (
        "https://api.example.com/cb?access_token=abcdef0123456789xyz&x=1",
        "https://api.example.com/cb?access_token=[REDACTED:secret]&x=1",
    ),
]

ORDINARY = [
    "Can you remind me what we decided about the deployment last week?",
    "The token bucket refills every second; the password reset link expires after an hour.",
    "The api key lives in the vault. Keys are rotated monthly. Bearer tokens expire quickly.",
    "He was the bearer of bad news, and the secret: keep calm.",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it (short sha 3f78685)",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "https://github.com/org/repo/pull/123?tab=files#diff-abcdef0123456789abcdef",
    "https://www.google.com/search?q=sqlite+fts5+trigram&oq=sqlite&sourceid=chrome",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "a task-force-of-twenty-people-123 met the disk-partition-table-0123456789ab",
    "skeleton-key, sk-8, risk_assessment_livestock, ghost_protocol_document",
    "def fetch(url: str, token: str) -> dict:\n    headers = {'Authorization': f'Bearer {token}'}",
    "api_key = ${OPENAI_API_KEY}; password: os.environ['DB_PASSWORD']; secret=<your-secret-here>",
    "max_tokens: 4096, token_count=12345678901234567890, secret_santa=alice-bob-carol-dave",
    "Southeast Asia, AKIA is not a word, AIza alone, eyJ alone, xox, at 12:30:AA",
    "我们昨天讨论了新网关的部署方案，密码重置流程需要一个秘密链接。",
    "hf_hub_download(repo_id, filename), npm_config_cache=/tmp/npm, SG.com, glpat-short, dop_v1_ab",
    "AccountKey=<your-key>; SG.example.com/path.to.file",
    "",
]


@pytest.mark.parametrize(("text", "expected"), REDACTED)
def test_known_key_formats_are_redacted(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected
    assert contains_secret(text)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact_secrets(text) == text
    assert not contains_secret(text)


def _secret_bodies(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=size).filter(
        lambda s: any(c.isdigit() for c in s)
    )


ALNUM = string.ascii_letters + string.digits


def _token(prefix: str, alphabet: str, size: int) -> st.SearchStrategy[tuple[str, str]]:
    """(text to embed, the part of it that must not survive redaction)."""
    return _secret_bodies(alphabet, size).map(lambda body: (prefix + body, prefix + body))


def _after(context: str, size: int, closing: str = "") -> st.SearchStrategy[tuple[str, str]]:
    return _secret_bodies(ALNUM, size).map(lambda body: (context + body + closing, body))


SECRETS = st.one_of(
    _token("sk-proj-", ALNUM, 40),
    _token("sk-ant-api03-", ALNUM, 40),
    _token("ghp_", ALNUM, 36),
    _token("AKIA", string.ascii_uppercase + string.digits, 16),
    _token("AIza", ALNUM, 35),
    _token("987654321:AA", ALNUM, 33),
    _token("sk_live_", ALNUM, 24),
    _token("xoxb-", ALNUM, 30),
    _after("Bearer ", 30),
    _after('password="', 20, '"'),
    _after("API_KEY=", 24),
)
SURROUNDING = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
SEPARATORS = st.sampled_from([" ", "\n", ". ", ": ", " (", "，", "\t"])


@settings(max_examples=300, deadline=None)
@given(before=SURROUNDING, sep1=SEPARATORS, secret=SECRETS, sep2=SEPARATORS, after=SURROUNDING)
def test_embedded_secret_never_survives(
    before: str, sep1: str, secret: tuple[str, str], sep2: str, after: str
) -> None:
    embedded, sensitive = secret
    assume(sensitive not in before + after)
    text = before + sep1 + embedded + sep2 + after
    redacted = redact_secrets(text)
    assert sensitive not in redacted
    assert "[REDACTED:" in redacted
    assert contains_secret(text)


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        st.text(),
        st.lists(st.one_of(SECRETS.map(lambda pair: pair[0]), SURROUNDING, SEPARATORS)).map("".join),
    )
)
def test_redaction_is_idempotent_and_consistent(text: str) -> None:
    redacted = redact_secrets(text)
    assert redact_secrets(redacted) == redacted
    assert not contains_secret(redacted)
    assert contains_secret(text) == (redacted != text)


@pytest.mark.parametrize(
    "text",
    [
        "a" * 200_000,
        "sk-" + "a" * 200_000,
        "password" + " " * 100_000 + "x",
        "Bearer " + "a-" * 100_000,
        "-----BEGIN PRIVATE KEY-----" + "\n" + "A" * 15 + " " * 100_000,
        ("password " * 20_000),
        "1" * 100_000 + ":AA",
    ],
)
def test_pathological_input_stays_linear(text: str) -> None:
    started = time.perf_counter()
    redact_secrets(text)
    assert time.perf_counter() - started < 2.0
