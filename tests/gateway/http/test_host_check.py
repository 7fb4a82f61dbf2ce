"""The Host check: a loopback gateway without a token answers only loopback names (DNS rebinding)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.config import HttpSettings
from gateway.runtime import Runtime
from tests.gateway.http.conftest import ADMIN_TOKEN, build_app, reads_of, served, stored_messages

_COMPLETION = {
    "messages": [{"role": "user", "content": "remember that my favourite colour is teal"}],
    "user": "victim",
}


async def test_without_a_token_a_foreign_host_is_refused_and_nothing_is_stored(runtime: Runtime) -> None:
    async with served(build_app(runtime, admin_token=None, api_token=None)) as gw, gw.client() as client:
        foreign = {"Host": "attacker.example"}
        api = await client.post("/v1/chat/completions", json=_COMPLETION, headers=foreign)
        posted = await client.post("/api/chat/messages", json={"text": "hi"}, headers=foreign)
        page = await client.get("/", headers=foreign)
        metrics = await client.get("/metrics", headers={"Host": "attacker.example:8080"})
        assert [r.status_code for r in (api, posted, page, metrics)] == [400, 400, 400, 400]
        assert "http.allowed_hosts" in api.text and len(api.content) < 200
        assert "mnemogate_chat" not in page.headers.get("set-cookie", "")
        assert (await client.get("/healthz", headers=foreign)).status_code == 200
        assert await stored_messages(runtime) == []
        assert (await reads_of(runtime).persons()).total == 0


@pytest.mark.parametrize("host", ["localhost", "localhost:8080", "127.0.0.1:8080", "[::1]:8080", "LOCALHOST"])
async def test_without_a_token_loopback_names_are_served(runtime: Runtime, host: str) -> None:
    async with served(build_app(runtime, admin_token=None, api_token=None)) as gw, gw.client() as client:
        answer = await client.post("/v1/chat/completions", json=_COMPLETION, headers={"Host": host})
    assert answer.status_code == 200, answer.text
    assert "teal" in answer.json()["choices"][0]["message"]["content"]


async def test_names_in_allowed_hosts_are_served_and_patterns_match_subdomains(runtime: Runtime) -> None:
    gw = build_app(runtime, admin_token=None, allowed_hosts=["chat.lan", "*.example.org"])
    async with served(gw), gw.client() as client:
        statuses = [
            (await client.get("/readyz", headers={"Host": host})).status_code
            for host in ("chat.lan", "chat.lan:8080", "a.example.org", "example.org", "chat.lan.evil", "")
        ]
    assert statuses == [200, 200, 200, 400, 400, 400]


async def test_with_a_token_any_host_works_unless_allowed_hosts_narrows_it(runtime: Runtime) -> None:
    async with served(build_app(runtime)) as gw, gw.client() as client:
        behind_proxy = await client.get("/readyz", headers={"Host": "chat.example.com"})
    assert behind_proxy.status_code == 200
    gw = build_app(runtime, allowed_hosts=["chat.example.com"])
    async with served(gw), gw.client() as client:
        auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        assert (
            await client.get("/admin/persons", headers={**auth, "Host": "chat.example.com"})
        ).status_code == 200
        assert (
            await client.get("/admin/persons", headers={**auth, "Host": "other.example"})
        ).status_code == 400
        assert (await client.get("/admin/persons", headers=auth)).status_code == 200  # 127.0.0.1:port


async def test_a_host_with_user_info_or_a_path_is_refused(runtime: Runtime) -> None:
    async with served(build_app(runtime, admin_token=None)) as gw, gw.client() as client:
        for host in ("attacker.example@localhost", "localhost/x", "localhost:80#", "[::1"):
            assert (await client.get("/readyz", headers={"Host": host})).status_code == 400, host


def test_allowed_hosts_patterns_are_checked_when_the_settings_are_read() -> None:
    HttpSettings(allowed_hosts=["chat.example.com", "*.example.org", "*"])
    for bad in ("", "chat.*.example.com", "*example.org"):
        with pytest.raises(ValidationError, match="allowed_hosts"):
            HttpSettings(allowed_hosts=[bad])
