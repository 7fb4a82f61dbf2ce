"""A browser talks to the agent through the web chat page and its JSON/SSE API."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from subprocess import PIPE

import httpx
import pytest

from gateway.http import COOKIE
from tests.gateway.http.conftest import Gateway, accounts_on, stored_messages
from tests.gateway.webchat.served_gateway import Served, idle, served, served_settings

OFFLINE = "[offline model]"


async def _wait_reply(
    client: httpx.AsyncClient, cursor: str, deadline_s: float = 10
) -> list[dict[str, object]]:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        body = (await client.get("/api/chat/messages", params={"after": cursor, "wait": 5})).json()
        if body["messages"]:
            return list(body["messages"])
        cursor = body["cursor"]
    raise AssertionError("no reply arrived")


async def test_page_is_served_with_a_private_cookie_its_own_assets_and_a_strict_policy(
    gateway: Gateway,
) -> None:
    async with gateway.client() as browser:
        response = await browser.get("/")
        assets = [await browser.get(path) for path in ("/static/chat.js", "/static/chat.css", "/favicon.ico")]
    assert response.status_code == 200
    assert "<textarea" in response.text and '<script src="/static/chat.js"' in response.text
    assert "/api/chat/stream" in assets[0].text
    for text in [response.text, *(a.text for a in assets)]:
        assert "http://" not in text.replace("http://www.w3.org", "")  # no CDN, no external assets
        assert "https://" not in text
    assert [a.status_code for a in assets] == [200, 200, 200]
    assert assets[2].headers["content-type"].startswith("image/svg+xml")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    cookie = response.headers["set-cookie"]
    assert f"{COOKIE}=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")


async def test_posted_message_gets_the_offline_models_reply_by_long_poll(gateway: Gateway) -> None:
    async with gateway.client() as browser:
        start = (await browser.get("/api/chat/messages")).json()
        assert start["messages"] == []
        posted = await browser.post(
            "/api/chat/messages", json={"text": "hello there", "client_message_id": "c1"}
        )
        assert posted.status_code == 200
        assert posted.json()["accepted"] is True
        assert posted.json()["event_id"].endswith(":c1")
        replies = await _wait_reply(browser, start["cursor"])
    assert len(replies) == 1
    assert str(replies[0]["html"]).startswith("<p>" + OFFLINE)
    assert "hello there" in str(replies[0]["html"])


async def test_reply_arrives_over_server_sent_events(gateway: Gateway) -> None:
    async with gateway.client() as browser:
        cursor = (await browser.get("/api/chat/messages")).json()["cursor"]
        async with browser.stream("GET", "/api/chat/stream", params={"after": cursor}) as stream:
            await browser.post("/api/chat/messages", json={"text": "stream me"})
            event: dict[str, object] = {}
            async for line in stream.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[len("data: ") :])
                    break
    assert "stream me" in str(event["html"])
    assert event["role"] == "assistant"


async def _first_event(browser: httpx.AsyncClient, **kwargs: object) -> dict[str, object]:
    async with browser.stream("GET", "/api/chat/stream", **kwargs) as stream:  # type: ignore[arg-type]
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                return dict(json.loads(line[len("data: ") :]))
    raise AssertionError("the stream ended without an event")


async def test_a_reconnecting_stream_resumes_from_its_last_event_not_from_the_url(gateway: Gateway) -> None:
    """EventSource reconnects to the same URL (``?after=`` of the first connect) with Last-Event-ID:
    the header is the newer position, so replies already shown are not replayed."""
    async with gateway.client() as browser:
        cursor = (await browser.get("/api/chat/messages")).json()["cursor"]
        await browser.post("/api/chat/messages", json={"text": "first one"})
        first = await _first_event(browser, params={"after": cursor})
        await browser.post("/api/chat/messages", json={"text": "second one"})
        resumed = await _first_event(
            browser, params={"after": cursor}, headers={"Last-Event-ID": str(first["cursor"])}
        )
    assert "first one" in str(first["html"])
    assert "second one" in str(resumed["html"])


async def test_history_survives_a_page_reload(gateway: Gateway) -> None:
    async with gateway.client() as browser:
        cursor = (await browser.get("/api/chat/messages")).json()["cursor"]
        await browser.post("/api/chat/messages", json={"text": "remember this line"})
        await _wait_reply(browser, cursor)
        reloaded = (await browser.get("/api/chat/messages")).json()["messages"]
    assert [m["role"] for m in reloaded] == ["user", "assistant"]
    assert reloaded[0]["text"] == "remember this line"
    assert str(reloaded[1]["text"]).startswith(OFFLINE)


async def test_a_retried_post_is_one_message_and_one_turn(gateway: Gateway) -> None:
    async with gateway.client() as browser:
        cursor = (await browser.get("/api/chat/messages")).json()["cursor"]
        first = await browser.post(
            "/api/chat/messages", json={"text": "once", "client_message_id": "retry-1"}
        )
        second = await browser.post(
            "/api/chat/messages", json={"text": "once", "client_message_id": "retry-1"}
        )
        assert first.json()["event_id"] == second.json()["event_id"]
        await _wait_reply(browser, cursor)
        await gateway.turns.drain()
        history = (await browser.get("/api/chat/messages")).json()["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert gateway.turns.turns == 1


async def test_a_repeated_delivery_is_shown_once(gateway: Gateway) -> None:
    """The delivery loop may retry a send after a crash; the browser must not see the reply twice."""
    async with gateway.client() as browser:
        cursor = (await browser.get("/api/chat/messages")).json()["cursor"]
        await browser.post("/api/chat/messages", json={"text": "x"})
        chat_id = browser.cookies[COOKIE]
    from gateway.contracts import OutboundMessage

    first = await gateway.web.send(
        OutboundMessage(gateway.web.chat_ref(chat_id), "dup", idempotency_key="k-1")
    )
    again = await gateway.web.send(
        OutboundMessage(gateway.web.chat_ref(chat_id), "dup", idempotency_key="k-1")
    )
    assert first == again
    items = gateway.web.feed.since(chat_id, None)
    assert sum(1 for item in items if item.receipt_id == "k-1") == 1
    assert cursor


async def test_two_browsers_have_separate_conversations(gateway: Gateway) -> None:
    async with gateway.client() as alice, gateway.client() as bob:
        a_cursor = (await alice.get("/api/chat/messages")).json()["cursor"]
        b_cursor = (await bob.get("/api/chat/messages")).json()["cursor"]
        assert alice.cookies[COOKIE] != bob.cookies[COOKIE]
        await alice.post("/api/chat/messages", json={"text": "alice secret"})
        await bob.post("/api/chat/messages", json={"text": "bob question"})
        a_reply = await _wait_reply(alice, a_cursor)
        b_reply = await _wait_reply(bob, b_cursor)
        bob_history = (await bob.get("/api/chat/messages")).json()["messages"]
    assert "alice secret" in str(a_reply[0]["html"])
    assert "bob question" in str(b_reply[0]["html"])
    assert all("alice" not in str(m["html"]) for m in bob_history)


async def test_a_forged_cookie_is_replaced(gateway: Gateway) -> None:
    async with gateway.client(cookies={COOKIE: "../../etc"}) as browser:
        response = await browser.get("/api/chat/messages")
    assert COOKIE in response.headers.get("set-cookie", "")


async def test_rejects_empty_text_and_answers_503_when_not_started(gateway: Gateway) -> None:
    async with gateway.client() as browser:
        assert (await browser.post("/api/chat/messages", json={"text": ""})).status_code == 422
        await gateway.web.stop()
        response = await browser.post("/api/chat/messages", json={"text": "anyone?"})
    assert response.status_code == 503


# --- The cookie is a secret; refusals are visible; against the real pipeline, queue and delivery ---


_TEST_CLIENTS = ("httpx", "httpcore")  # the test's own HTTP client logs the cookie it receives


async def _user_texts(gateway: Served) -> list[str]:
    return [str(m.content) for m in await stored_messages(gateway.runtime, "user")]


def _every_stored_byte(home: Path) -> str:
    """Every file under the home (databases and their WAL, keys, memory), decoded: what a reader sees."""
    files = sorted(path for path in home.rglob("*") if path.is_file())
    return "\n".join(path.read_bytes().decode("utf-8", "replace") for path in files)


async def test_fifteen_quick_sends_the_limited_ones_get_429_with_retry_after_and_are_not_stored(
    home: Path,
) -> None:
    settings = served_settings(rate_limit={"capacity": 10, "refill_s": 3600})
    async with served(home, settings) as gateway, gateway.browser() as browser:
        await browser.get("/")
        answers = [
            await browser.post(
                "/api/chat/messages", json={"text": f"message {n}", "client_message_id": f"c{n}"}
            )
            for n in range(15)
        ]
        await idle(gateway)
        stored = await _user_texts(gateway)
        retried = await browser.post(
            "/api/chat/messages", json={"text": "message 14", "client_message_id": "c14"}
        )
    assert [a.status_code for a in answers] == [200] * 10 + [429] * 5
    assert all(int(a.headers["retry-after"]) >= 1 for a in answers[10:])
    assert all("accepted" not in a.json() for a in answers[10:])
    assert stored == [f"message {n}" for n in range(10)]
    assert retried.status_code == 429  # a retry of a refused message is judged again, not deduped away


async def test_a_cookieless_flood_from_one_address_is_limited(home: Path) -> None:
    settings = served_settings(
        rate_limit={"enabled": False, "new_web_persons": {"capacity": 3, "refill_s": 3600}}
    )
    async with served(home, settings) as gateway:
        answers = []
        for n in range(6):
            async with gateway.browser() as stranger:  # a fresh client: no cookie at all
                answers.append(await stranger.post("/api/chat/messages", json={"text": f"flood {n}"}))
        async with gateway.browser(cookies={COOKIE: "invented-cookie-0123456789abcdef"}) as forger:
            forged = await forger.post("/api/chat/messages", json={"text": "with a made-up cookie"})
        async with gateway.browser() as regular:
            await regular.get("/")
        web_persons = len(await accounts_on(gateway.runtime, "web"))
    assert [a.status_code for a in answers] == [200, 200, 200, 429, 429, 429]
    assert int(answers[-1].headers["retry-after"]) >= 1
    assert forged.status_code == 429
    assert web_persons == 3


async def test_the_cookie_is_never_stored_shown_or_logged(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with served(home) as gateway, gateway.browser() as browser:
        await browser.get("/")
        cookie = browser.cookies[COOKIE]
        posted = await browser.post("/api/chat/messages", json={"text": "hello", "client_message_id": "c1"})
        await browser.post("/api/chat/messages", json={"text": "/whoami", "client_message_id": "c2"})
        await idle(gateway)
        history = (await browser.get("/api/chat/messages")).text
        async with gateway.admin() as admin:
            persons = (await admin.get("/admin/persons")).text
            conversations = (await admin.get("/admin/conversations")).text
        stored = _every_stored_byte(home)
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway.cli", "sessions", "list", "--home", str(home), stdout=PIPE
    )
    listed = (await asyncio.wait_for(cli.communicate(), 60))[0].decode()
    assert cli.returncode == 0 and "web" in listed
    assert "Account: web:" in history  # the /whoami reply names the account...
    assert "hello" in stored  # (the files are read: the message is in them)
    for place, text in {
        "POST response": posted.text,
        "/whoami and history": history,
        "/admin/persons": persons,
        "/admin/conversations": conversations,
        "the home's files": stored,
        "sessions list": listed,
        "log": "\n".join(
            record.getMessage() for record in caplog.records if not record.name.startswith(_TEST_CLIENTS)
        ),
    }.items():
        assert cookie not in text, place  # ...but never by the cookie
    assert (home / "client_ids.key").stat().st_mode & 0o777 == 0o600


async def test_a_lower_case_copy_of_a_cookie_reads_nothing_of_that_browser(home: Path) -> None:
    async with served(home) as gateway:
        async with gateway.browser() as alice:
            await alice.get("/")
            await alice.post("/api/chat/messages", json={"text": "alice's private note"})
            await idle(gateway)
            cookie = alice.cookies[COOKIE]
        assert cookie.lower() != cookie
        async with gateway.browser(cookies={COOKIE: cookie.lower()}) as mallory:
            seen = (await mallory.get("/api/chat/messages")).json()["messages"]
    assert seen == []
