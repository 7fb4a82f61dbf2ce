"""The admin console in a real browser against a real ``mnemogate serve`` (offline model): an operator signs
in, sees today's usage and who spent it, reads a conversation's tool call with its arguments, sees the
person's usage, edits their memory and finds the edit in the audit trail, approves a pairing request that
then lets a stranger chat, and signs out."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import openai
import yaml

from tests.browser.chromium import screenshot
from tests.e2e.gateway_process import serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TOKEN = "browser-admin-token-0123456789"
WAIT_MS = 10_000


def _config(home: Path) -> None:
    config = {
        "http": {"admin_token": TOKEN},
        "admin": {"timezone": "Europe/Berlin"},
        # Web chat visitors the bot does not know get a pairing code; the OpenAI API stays open.
        "access": {"web": {"mode": "allowlist", "pairing": True}},
        "rate_limit": {"enabled": False},
    }
    home.joinpath("config.yaml").write_text(yaml.safe_dump(config))


def _reply_to(visitor: httpx.Client, cursor: str) -> str:
    """The next reply the web chat shows the visitor after ``cursor``, as its HTML (long polls, bounded)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        body = visitor.get("/api/chat/messages", params={"after": cursor, "wait": 5}).json()
        if body["messages"]:
            return str(body["messages"][0]["html"])
        cursor = body["cursor"]
    raise AssertionError("the web chat showed no reply")


def _sign_in(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/admin/")
    assert "/admin/sign-in" in page.url
    page.get_by_label("Admin token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/admin/$"), timeout=WAIT_MS)


def test_an_operator_reads_a_tool_call_edits_memory_approves_pairing_and_signs_out(
    browser: Browser, home: Path
) -> None:
    _config(home)
    with serving(home) as base_url, httpx.Client(base_url=base_url, timeout=30) as visitor:
        with openai.OpenAI(base_url=f"{base_url}/v1", api_key=TOKEN, max_retries=0, timeout=30) as client:
            client.chat.completions.create(
                model="mnemogate",
                user="ada",
                messages=[{"role": "user", "content": "remember that my favourite tea is sencha"}],
            )
        visitor.get("/").raise_for_status()  # the chat page gives the visitor's browser its cookie
        refused = visitor.post(
            "/api/chat/messages", json={"text": "hello, may I talk to you?", "client_message_id": "v1"}
        )
        assert refused.status_code >= 400 and "pairing code" in refused.text

        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _sign_in(page, base_url)
        assert page.get_by_role("heading", name="Overview").is_visible()
        # The offline model's calls are recorded and priced (free): today's cost and its one spender.
        assert page.get_by_role("heading", name="Usage today").is_visible()
        assert page.locator("ol.spenders li").count() == 1
        assert "$0.0000" in page.locator("ol.spenders li").first.inner_text()
        screenshot(page, "admin-overview")

        # The API conversation's page shows the memory tool call with its arguments.
        page.get_by_role("link", name="Conversations", exact=True).click()
        page.locator("tr", has_text="api").get_by_role("link").first.click()
        arguments = page.locator(".tool-arguments").first
        arguments.wait_for(timeout=WAIT_MS)
        assert '"action": "add"' in arguments.inner_text() and "sencha" in arguments.inner_text()
        assert "CET" in page.content() or "CEST" in page.content()  # admin.timezone: Europe/Berlin
        screenshot(page, "admin-conversation")

        # Edit that person's memory: preview the diff, save, find it in the audit trail.
        page.locator("dl.facts dd a").first.click()
        assert page.get_by_role("heading", name="Model usage").is_visible()
        assert page.locator("table.usage td", has_text="offline").count() == 1
        page.get_by_role("link", name="Edit or remove").first.click()
        page.get_by_label("New text").fill("my favourite tea is gyokuro")
        page.get_by_role("button", name="Preview the change").click()
        assert page.locator(".diff-view del").first.inner_text().strip() == "sencha"
        page.get_by_role("button", name="Save this change").click()
        page.get_by_role("status").wait_for(timeout=WAIT_MS)
        latest = page.locator("table.audit tbody tr").first
        assert "admin:console" in latest.inner_text() and "replace" in latest.inner_text()
        assert latest.locator("ins").first.inner_text().strip() == "gyokuro"
        screenshot(page, "admin-person-audit")

        # Approve the stranger's pairing request: their next message is answered.
        page.get_by_role("link", name="Pairing", exact=True).click()
        page.get_by_role("button", name=re.compile(r"^Approve ")).click()
        assert "approved" in page.get_by_role("status").inner_text()
        cursor = visitor.get("/api/chat/messages").json()["cursor"]
        answered = visitor.post(
            "/api/chat/messages", json={"text": "thanks, hello again", "client_message_id": "v2"}
        )
        assert answered.status_code == 200, answered.text
        assert "hello again" in _reply_to(visitor, cursor)
        page.goto(f"{base_url}/admin/ui/conversations?platform=web")
        assert page.locator("tbody tr").count() == 1
        screenshot(page, "admin-pairing-approved")

        # Signing out locks the console again.
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(re.compile(r".*/admin/sign-in.*"), timeout=WAIT_MS)
        page.goto(f"{base_url}/admin/ui/persons")
        assert "/admin/sign-in" in page.url
        assert not [c for c in page.context.cookies() if c["name"] == "mnemogate_admin"]
        page.close()
