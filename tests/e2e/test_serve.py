"""``make run``-like: the real ``mnemogate serve`` process answers a browser, guards its admin API."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import openai

from tests.e2e.gateway_process import serving, start, stop

TOKEN = "e2e-admin-token-0123456789"


def _reply(browser: httpx.Client, cursor: str) -> list[dict[str, object]]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        body = browser.get("/api/chat/messages", params={"after": cursor, "wait": 5}).json()
        if body["messages"]:
            return list(body["messages"])
        cursor = body["cursor"]
    raise AssertionError("no reply from the gateway")


def test_browser_gets_the_offline_reply_and_admin_needs_the_token(home: Path) -> None:
    (home / "config.yaml").write_text(f"http:\n  admin_token: {TOKEN}\naccess:\n  api:\n    mode: open\n")
    with serving(home) as base_url:
        with httpx.Client(base_url=base_url, timeout=30) as browser:
            page = browser.get("/")
            assert page.status_code == 200 and "<textarea" in page.text
            cursor = browser.get("/api/chat/messages").json()["cursor"]
            posted = browser.post(
                "/api/chat/messages", json={"text": "hello from e2e", "client_message_id": "m1"}
            )
            assert posted.json()["accepted"] is True
            reply = _reply(browser, cursor)
            assert str(reply[0]["html"]).startswith("<p>[offline model]")
            assert "hello from e2e" in str(reply[0]["html"])
            history = browser.get("/api/chat/messages").json()["messages"]
            assert [m["role"] for m in history] == ["user", "assistant"]

            assert browser.get("/admin/conversations").status_code == 401
            auth = {"Authorization": f"Bearer {TOKEN}"}
            listed = browser.get("/admin/conversations", headers=auth).json()
            assert listed["total"] == 1 and listed["items"][0]["platform"] == "web"
            assert "mnemogate_turns_total" in browser.get("/metrics").text

        with openai.OpenAI(base_url=f"{base_url}/v1", api_key=TOKEN, max_retries=0, timeout=30) as client:
            answer = client.chat.completions.create(
                model="mnemogate", user="e2e-sdk", messages=[{"role": "user", "content": "via the sdk"}]
            )
        assert "via the sdk" in (answer.choices[0].message.content or "")


def test_command_replies_stay_in_the_web_chat_history_after_a_reload(home: Path) -> None:
    (home / "config.yaml").write_text(f"http:\n  admin_token: {TOKEN}\n")
    with serving(home) as base_url, httpx.Client(base_url=base_url, timeout=30) as browser:
        cursor = browser.get("/api/chat/messages").json()["cursor"]
        browser.post("/api/chat/messages", json={"text": "first words", "client_message_id": "m1"})
        cursor = _reply(browser, cursor)[-1]["cursor"]
        browser.post("/api/chat/messages", json={"text": "/help", "client_message_id": "m2"})
        help_html = str(_reply(browser, str(cursor))[0]["html"])
        assert "/new" in help_html
        history = browser.get("/api/chat/messages").json()["messages"]
        assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
        assert history[0]["text"] == "first words" and history[2]["text"] == "/help"
        assert history[3]["html"] == help_html
        # /new starts a new conversation: only what was said since then is shown.
        cursor = browser.get("/api/chat/messages").json()["cursor"]
        browser.post("/api/chat/messages", json={"text": "/new", "client_message_id": "m3"})
        started = str(_reply(browser, cursor)[0]["html"])
        shown = [m["html"] for m in browser.get("/api/chat/messages").json()["messages"]]
        assert shown == ["/new", started]
        # An admin ends the conversation: the window starts empty, no old notices come back.
        auth = {"Authorization": f"Bearer {TOKEN}"}
        live = [
            c for c in browser.get("/admin/conversations", headers=auth).json()["items"] if not c["ended_at"]
        ]
        browser.post(f"/admin/conversations/{live[0]['id']}/reset", headers=auth).raise_for_status()
        assert browser.get("/api/chat/messages").json()["messages"] == []


def test_refuses_a_public_address_without_an_admin_token(home: Path) -> None:
    process = start(home, "serve", "--host", "0.0.0.0", "--port", "0")
    try:
        code = process.wait(timeout=30)
    finally:
        out = stop(process)
    assert code != 0
    assert "http.admin_token" in out
