"""The browser the page tests drive is real: Chromium renders a page on 127.0.0.1 and runs its script."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

_PAGE = (
    b"<!doctype html><title>probe</title><button id=b onclick=\"this.textContent='clicked'\">click</button>"
)


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(_PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        thread.join(5)


def test_chromium_runs_a_local_pages_script(browser: Browser, served: str) -> None:
    page = browser.new_page()
    page.goto(served)
    page.click("#b")
    page.wait_for_function("document.getElementById('b').textContent === 'clicked'", timeout=10_000)
    assert page.title() == "probe"
