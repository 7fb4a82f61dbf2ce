"""A home written by earlier versions, whose web accounts ARE the browsers' cookies, is re-keyed at start:
the old browser keeps its conversation, and state.db no longer holds the cookie anywhere."""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import quote

from gateway.http import COOKIE
from gateway.identity import ClientKey
from tests.gateway.webchat.served_gateway import idle, served


def _legacy_cookie() -> str:
    # Earlier versions minted secrets.token_urlsafe(24); make sure the escaped form differs too.
    return "Aa-" + secrets.token_urlsafe(24)[3:]


def _stored_bytes(home: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(home.glob("state.db*")) if path.is_file())


async def test_raw_cookie_accounts_are_rekeyed_and_the_browser_keeps_its_conversation(home: Path) -> None:
    raw = _legacy_cookie()
    async with served(home) as before:
        # Exactly what an earlier version stored for a browser: the cookie as its account and chat id.
        await before.web.submit(raw, "written before the upgrade", "legacy-1")
        await idle(before)
        person = await before.runtime.storage.identity.account_person("web", raw)
        assert person is not None
    async with served(home) as after:
        async with after.browser(cookies={COOKIE: raw}) as browser:
            history = (await browser.get("/api/chat/messages")).json()["messages"]
            posted = await browser.post("/api/chat/messages", json={"text": "and after it"})
            await idle(after)
            again = (await browser.get("/api/chat/messages")).json()["messages"]
        identity = after.runtime.storage.identity
        web_accounts = await identity.platform_account_ids("web")
        hashed = (await ClientKey.for_deployment(after.runtime.storage.client_key)).web_account(raw)
        assert await identity.account_person("web", hashed) == person
    assert [m["text"] for m in history][:1] == ["written before the upgrade"]
    assert posted.status_code == 200
    assert [m["text"] for m in again if m["role"] == "user"] == ["written before the upgrade", "and after it"]
    assert web_accounts == {hashed}
    data = _stored_bytes(home)
    for form in {raw, quote(raw, safe="").replace("-", "%2D")}:
        assert form.encode() not in data, form
