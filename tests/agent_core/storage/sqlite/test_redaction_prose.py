"""Secrets written without a vendor prefix: passwords in prose, credentials in URLs, AWS secret keys, tokens.

What is said around the secret is stored as written; the secret itself is not stored, not indexed and not
logged. Talking about passwords, tokens and keys (and hashes, UUIDs, URLs, code) is left alone.
"""

from __future__ import annotations

import json
import string
import time
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agent_core.storage import NewMessage, Principal
from agent_core.storage.redaction import contains_secret, redact_secrets
from agent_core.storage.sqlite import StateStore

from .secret_corpus import DISCLOSURES, HARMLESS

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(("text", "stored"), DISCLOSURES)
def test_a_disclosed_secret_is_replaced_and_its_sentence_kept(text: str, stored: str) -> None:
    assert redact_secrets(text) == stored
    assert contains_secret(text)


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_text_about_secrets_is_stored_as_written(text: str) -> None:
    assert redact_secrets(text) == text
    assert not contains_secret(text)


def test_the_corpora_are_broad_enough_to_mean_something() -> None:
    assert len(DISCLOSURES) >= 60 and len(HARMLESS) >= 60
    assert len({text for text, _ in DISCLOSURES}) == len(DISCLOSURES) and len(set(HARMLESS)) == len(HARMLESS)


def test_a_url_keeps_scheme_user_host_and_path() -> None:
    assert (
        redact_secrets("clone from https://deploy:Xk9mq2pL@git.example.com:8443/team/repo.git?ref=main")
        == "clone from https://deploy:[REDACTED:password]@git.example.com:8443/team/repo.git?ref=main"
    )


def test_a_vendor_token_inside_a_url_is_named_for_its_vendor_wherever_it_sits() -> None:
    token = "ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAbCd"
    assert redact_secrets(f"https://{token}:x-oauth-basic@github.com/o/r") == (
        "https://[REDACTED:github]:[REDACTED:password]@github.com/o/r"
    )


def test_a_key_id_and_its_secret_pasted_together_are_both_redacted() -> None:
    text = f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {AWS_SECRET}\n"
    assert redact_secrets(text) == (
        "[default]\naws_access_key_id = [REDACTED:aws]\naws_secret_access_key = [REDACTED:aws]\n"
    )


# --- properties --------------------------------------------------------------------------------------------

PASSWORD_ALPHABET = string.ascii_letters + string.digits + "!@#$%^*+?~"
PASSWORDS = st.text(alphabet=PASSWORD_ALPHABET, min_size=6, max_size=24).filter(
    lambda s: s[0].isalnum() and any(c.isdigit() for c in s)
)
AWS_CHARS = string.ascii_letters + string.digits + "/+"
AWS_SECRETS = st.text(alphabet=AWS_CHARS, min_size=40, max_size=40).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.islower() for c in s) and any(c.isupper() for c in s)
)
TOKENS = st.text(alphabet=string.ascii_letters + string.digits, min_size=20, max_size=48).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
)


def _said(phrases: list[str], values: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    """(text to embed, the secret that must not survive)."""
    return st.tuples(st.sampled_from(phrases), values).map(lambda pair: (pair[0] + pair[1], pair[1]))


DISCLOSED = st.one_of(
    _said(
        [
            "my password is ",
            "password: ",
            "pwd=",
            "the wifi password is ",
            "I changed my password to ",
            "Mein Passwort ist ",
            "mot de passe : ",
            "пароль: ",
            "passcode is ",
        ],
        PASSWORDS,
    ),
    _said(["aws secret key is ", "AWS_SECRET_ACCESS_KEY=", "aws secret access key: "], AWS_SECRETS),
    _said(["the token is ", "my api key: ", "the client secret is ", "access token = "], TOKENS),
    # `?` `#` `/` end a URL's authority (RFC 3986), so a password in a URL never holds them unencoded.
    PASSWORDS.filter(lambda pw: not set(pw) & set("?#/")).map(
        lambda pw: (f"postgres://app:{pw}@db.internal:5432/app", pw)
    ),
)
SURROUNDING = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
SEPARATORS = st.sampled_from([" ", "\n", ". ", " (", "\t", ", "])


@settings(max_examples=300, deadline=None)
@given(before=SURROUNDING, sep1=SEPARATORS, secret=DISCLOSED, sep2=SEPARATORS, after=SURROUNDING)
def test_a_disclosed_secret_never_survives_whatever_surrounds_it(
    before: str, sep1: str, secret: tuple[str, str], sep2: str, after: str
) -> None:
    embedded, sensitive = secret
    assume(sensitive not in before + after)
    text = before + sep1 + embedded + sep2 + after
    redacted = redact_secrets(text)
    assert sensitive not in redacted
    assert contains_secret(text)


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(
        st.one_of(DISCLOSED.map(lambda pair: pair[0]), st.sampled_from(HARMLESS), SURROUNDING, SEPARATORS),
        max_size=8,
    ).map("".join)
)
def test_prose_redaction_is_idempotent_and_consistent(text: str) -> None:
    redacted = redact_secrets(text)
    assert redact_secrets(redacted) == redacted
    assert not contains_secret(redacted)
    assert contains_secret(text) == (redacted != text)


def test_a_secret_followed_by_a_quote_in_a_json_log_line_leaves_valid_json() -> None:
    line = json.dumps({"message": 'set password=abcdefghijklmnop1" and PWD: s3cr3t!"'})
    assert json.loads(redact_secrets(line)) == {
        "message": 'set password=[REDACTED:password]" and PWD: [REDACTED:password]"'
    }


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(
        st.one_of(DISCLOSED.map(lambda pair: pair[0]), SURROUNDING, st.sampled_from(['"', "\\", "\n", " "])),
        max_size=8,
    ).map("".join)
)
def test_a_redacted_json_log_line_is_still_json(text: str) -> None:
    """The JSON log formatter redacts the encoded line, so no redaction may split an escape sequence."""
    line = json.dumps({"message": text, "n": 1}, ensure_ascii=False)
    decoded = json.loads(redact_secrets(line))
    assert decoded["n"] == 1


CREDENTIAL_KEYS = st.sampled_from(["password", "api_key", "token", "secret", "pwd", "db_password", "note"])
ESCAPED = st.sampled_from(['"', "\\", '\\"', "\n"])
JSON_VALUES = st.one_of(
    SURROUNDING,
    PASSWORDS,
    DISCLOSED.map(lambda pair: pair[0]),
    st.tuples(st.one_of(PASSWORDS, TOKENS), ESCAPED, st.one_of(PASSWORDS, TOKENS, st.just(""))).map("".join),
)


@settings(max_examples=300, deadline=None)
@given(arguments=st.dictionaries(CREDENTIAL_KEYS, JSON_VALUES, max_size=4))
def test_a_redacted_json_document_with_credential_keys_is_still_json(arguments: dict[str, str]) -> None:
    """Tool calls are stored as JSON after redaction: a quoted value goes with its escapes, or stays."""
    document = json.dumps([{"name": "login", "arguments": arguments}], ensure_ascii=False)
    (call,) = json.loads(redact_secrets(document))
    assert set(call["arguments"]) == set(arguments)


@pytest.mark.parametrize(
    "text",
    [
        "password is " * 20_000,
        "pwd:" * 50_000,
        "pwd:1" * 40_000,
        "my password is " + "a&" * 100_000,
        'password: "' * 30_000,
        "password for " * 20_000,
        "aws " * 50_000,
        "aws-" * 50_000,
        "aws " + "ab " * 60_000,
        "AKIAIOSFODNN7EXAMPLE " + "ab " * 60_000,
        "https://a:" * 30_000,
        "http://u:" + "@" * 100_000,
        "http://u:" + "p" * 200_000,
        "the token is " + "a1-" * 60_000,
        "secret is " * 20_000,
        "PIN is " + "1" * 200_000,
        "clave de " * 20_000,
        "-----BEGIN PRIVATE KEY-----" + "\\n" * 100_000,
    ],
    ids=lambda text: repr(text[:16]),
)
def test_pathological_prose_stays_linear(text: str) -> None:
    started = time.perf_counter()
    redact_secrets(text)
    assert time.perf_counter() - started < 2.0


def _best_seconds(text: str) -> float:
    return min(timeit.repeat(partial(redact_secrets, text), number=1, repeat=3, timer=time.process_time))


# Each maker builds a text of about n characters. Repeated private-key headers without an END line were
# quadratic (3.3 s at 100k characters): every header searched the rest of the text for an END.
SCALING_INPUTS = {
    "key headers": lambda n: "-----BEGIN PRIVATE KEY-----\n" * (n // 28),
    "escaped key headers": lambda n: "-----BEGIN RSA PRIVATE KEY-----\\n" * (n // 33),
    "headers and body lines": lambda n: "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n" * (n // 53),
    "header and a long body": lambda n: "-----BEGIN RSA PRIVATE KEY-----\n" + "QUFB" * (n // 4),
}


@pytest.mark.parametrize("make", SCALING_INPUTS.values(), ids=SCALING_INPUTS.keys())
def test_pathological_prose_scales_linearly(make: Callable[[int], str]) -> None:
    """Four times the text costs about four times the time (a quadratic scan costs sixteen)."""
    small, large = _best_seconds(make(12_500)), _best_seconds(make(50_000))
    assert large < 8 * max(small, 0.002), (small, large)


# --- at the persistence boundary ---------------------------------------------------------------------------

ALICE = Principal(person_id="p-alice", platform="web", user_id="a", chat_id="a", chat_type="dm")


async def test_prose_secrets_are_neither_stored_nor_searchable(tmp_path: Path) -> None:
    said = (
        "my password is Summer2024! and the db is postgres://app:s3cr3tPass@db.internal/app, "
        f"aws secret key is {AWS_SECRET}"
    )
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("web:a", ALICE)
        await store.append_messages(conversation.tip_session_id, [NewMessage("user", said, api_content=said)])
        (stored,) = await store.segment_messages(conversation.tip_session_id)
        assert await store.wait_indexed(5)
        found = [await store.fts_match(None, f'"{word}"', limit=5) for word in ("Summer2024", "s3cr3tPass")]
    assert stored.content == stored.api_content
    assert stored.content == (
        "my password is [REDACTED:password] and the db is "
        "postgres://app:[REDACTED:password]@db.internal/app, aws secret key is [REDACTED:aws]"
    )
    assert found == [[], []]


async def test_a_tool_call_with_a_quoted_credential_stays_readable_after_redaction(tmp_path: Path) -> None:
    call = {"id": "c1", "name": "login", "arguments": {"api_key": 'abcdefghijklmnop"qrstuvwxyz12'}}
    async with StateStore(tmp_path) as store:
        conversation = await store.ensure_conversation("web:a", ALICE)
        await store.append_messages(
            conversation.tip_session_id, [NewMessage("assistant", None, tool_calls=[call])]
        )
        (stored,) = await store.segment_messages(conversation.tip_session_id)
    assert stored.tool_calls == (
        {"id": "c1", "name": "login", "arguments": {"api_key": "[REDACTED:secret]"}},
    )
