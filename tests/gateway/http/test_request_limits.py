"""Hostile requests get short 4xx answers: huge bodies, invalid fields, lone surrogates, huge numbers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from tests.gateway.http.conftest import API_TOKEN, Gateway, stored_messages

_HUGE = 20 * 1024 * 1024
_JSON = {"Content-Type": "application/json", "Authorization": f"Bearer {API_TOKEN}"}


async def _stored_messages(gateway: Gateway) -> int:
    return len(await stored_messages(gateway.runtime))


async def test_a_20_mb_message_gets_a_short_413_before_it_is_parsed(gateway: Gateway) -> None:
    body = b'{"text": "' + b"x" * _HUGE + b'"}'
    async with gateway.client() as client:
        refused = await client.post("/api/chat/messages", content=body, headers=_JSON)
        api = await client.post(
            "/v1/chat/completions",
            content=b'{"messages": [{"role": "user", "content": "' + b"y" * _HUGE + b'"}]}',
            headers=_JSON,
        )
    assert refused.status_code == 413 and len(refused.content) < 200
    assert api.status_code == 413 and len(api.content) < 200
    assert await _stored_messages(gateway) == 0


async def test_a_body_without_content_length_is_cut_at_the_limit(gateway: Gateway) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(40):
            yield b"z" * (1024 * 1024)

    async with gateway.client() as client:
        refused = await client.post("/api/chat/messages", content=chunks(), headers=_JSON)
    assert refused.status_code == 413 and len(refused.content) < 200


async def test_a_validation_error_never_echoes_the_input(gateway: Gateway) -> None:
    secretish = "do-not-echo-" + "w" * 500_000
    async with gateway.client() as client:
        invalid = await client.post("/api/chat/messages", json={"text": secretish})
    assert invalid.status_code == 422
    assert len(invalid.content) < 1000 and "do-not-echo" not in invalid.text
    assert invalid.json()["detail"][0]["loc"] == ["body", "text"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/chat/messages", b'{"text": "x \\ud800"}'),
        ("/api/chat/messages", b'{"text": "' + b"x" * 30_000 + b' \\udfff"}'),
        ("/v1/chat/completions", b'{"messages": [{"role": "user", "content": "x \\ud800"}]}'),
    ],
)
async def test_a_lone_surrogate_is_a_clear_400_without_a_traceback(
    gateway: Gateway, caplog: pytest.LogCaptureFixture, path: str, body: bytes
) -> None:
    caplog.set_level(logging.WARNING)
    async with gateway.client() as client:
        refused = await client.post(path, content=body, headers=_JSON)
    assert refused.status_code == 400, refused.text
    assert "surrogate" in refused.text and len(refused.content) < 300
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert await _stored_messages(gateway) == 0


async def test_a_surrogate_pair_is_an_ordinary_character(gateway: Gateway) -> None:
    async with gateway.client() as client:
        accepted = await client.post(
            "/api/chat/messages",
            content=b'{"text": "party \\ud83c\\udf89 and a path C:\\\\ud800"}',
            headers=_JSON,
        )
    assert accepted.status_code == 200, accepted.text


@pytest.mark.parametrize(
    "query",
    ["/admin/conversations?offset=9223372036854775808", "/admin/persons?offset=99999999999999999999",
     "/admin/conversations/c/messages?after=9223372036854775808"],
)  # fmt: skip
async def test_admin_numbers_past_64_bits_are_a_422(gateway: Gateway, query: str) -> None:
    async with gateway.admin() as admin:
        refused = await admin.get(query)
    assert refused.status_code == 422, refused.text
    assert len(refused.content) < 500
