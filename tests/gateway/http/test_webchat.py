"""A browser talks to the agent through the web chat page and its JSON/SSE API."""

from __future__ import annotations

import json
import time

import httpx

from gateway.http import COOKIE
from tests.gateway.http.conftest import Gateway

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


async def test_page_is_served_with_a_private_cookie(gateway: Gateway) -> None:
    async with gateway.client() as browser:
        response = await browser.get("/")
    assert response.status_code == 200
    assert "<textarea" in response.text and "/api/chat/stream" in response.text
    assert "http://" not in response.text.replace("http://www.w3.org", "")  # no CDN, no external assets
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
    assert str(replies[0]["text"]).startswith(OFFLINE)
    assert "hello there" in str(replies[0]["text"])


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
    assert "stream me" in str(event["text"])
    assert event["role"] == "assistant"


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
    assert "alice secret" in str(a_reply[0]["text"])
    assert "bob question" in str(b_reply[0]["text"])
    assert all("alice" not in str(m["text"]) for m in bob_history)


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
