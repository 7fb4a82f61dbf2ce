"""The real ``mnemogate serve`` process re-keys a home's raw-cookie web accounts at start and limits the
new browsers one address may bring, as configured under ``rate_limit.new_web_persons``."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import httpx

from gateway.http import COOKIE
from tests.e2e.gateway_process import serving
from tests.gateway.webchat.served_gateway import idle, served


async def _written_by_an_earlier_version(home: Path, raw: str) -> None:
    async with served(home) as before:  # what an earlier version stored: the cookie as the account
        await before.web.submit(raw, "from the old version", "old-1")
        await idle(before)


def test_serve_rekeys_raw_cookie_accounts_and_limits_new_browsers_per_address(home: Path) -> None:
    raw = "Zz-" + secrets.token_urlsafe(24)[3:]
    asyncio.run(_written_by_an_earlier_version(home, raw))
    (home / "config.yaml").write_text(
        "rate_limit:\n  new_web_persons:\n    capacity: 2\n    refill_s: 3600\n", encoding="utf-8"
    )
    with serving(home) as base_url:
        with httpx.Client(base_url=base_url, timeout=20, cookies={COOKIE: raw}) as old_browser:
            history = old_browser.get("/api/chat/messages").json()["messages"]
            known = old_browser.post("/api/chat/messages", json={"text": "still me"})
        statuses = []
        for n in range(3):
            with httpx.Client(base_url=base_url, timeout=20) as stranger:
                statuses.append(stranger.post("/api/chat/messages", json={"text": f"new {n}"}))
    assert [m["text"] for m in history][:1] == ["from the old version"]
    assert known.status_code == 200  # a browser the gateway knows is never charged as a new one
    assert [r.status_code for r in statuses] == [200, 200, 429]
    assert int(statuses[-1].headers["retry-after"]) >= 1
    data = b"".join(p.read_bytes() for p in home.glob("state.db*") if p.is_file())
    assert raw.encode() not in data and raw.replace("-", "%2D").encode() not in data
