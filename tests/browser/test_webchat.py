"""The web chat in a real browser, against a real ``mnemogate serve`` whose model streams from a fake server.

One gateway serves the whole module (its home keeps everything the earlier tests did); each test opens its
own browser context, so each is a new visitor with its own cookie unless it says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agent_core.llm.fakes import FakeReply, FakeToolCall
from tests.browser.chat_world import ChatWorld, chat_world, eventually
from tests.browser.chromium import PHONE, screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

MARKDOWN = """## Packing list

Here is **what to bring**, with `inline code`:

| item | count |
| --- | --- |
| socks | 3 |
| tea | 1 |

```python
print("ready")
```

- first
- second

> a quote. See [the docs](https://example.org/docs). Done."""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[ChatWorld]:
    with chat_world(tmp_path_factory.mktemp("webchat") / "home") as served:
        yield served


def _open(browser: Browser, world: ChatWorld, **options: object) -> Page:
    # The page's CSP forbids eval, which Playwright's wait_for_function needs; bypassing it also means the
    # safety checks below hold by the sanitiser alone, without the CSP's second line of defence.
    context = browser.new_context(bypass_csp=True, **options)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(world.url)
    page.wait_for_function("document.getElementById('status').dataset.state === 'connected'")
    return page


def _send(page: Page, text: str) -> None:
    page.fill("#text", text)
    page.keyboard.press("Enter")


def _assistant_texts(page: Page) -> list[str]:
    return list(page.eval_on_selector_all(".msg.assistant", "els => els.map(e => e.innerText)"))


def test_a_markdown_reply_streams_in_steps_shows_its_tool_and_renders_tables_and_code(
    browser: Browser, world: ChatWorld
) -> None:
    world.model.script(
        FakeReply(tool_calls=(FakeToolCall("session_search", {"query": "zzqx packing"}),)),
        FakeReply(text=MARKDOWN, chunks=14, chunk_delay_s=0.12, delay_s=0.6),
    )
    page = _open(browser, world, permissions=["clipboard-read", "clipboard-write"])
    assert page.is_visible("#empty")  # a first visit says what the bot can do
    _send(page, "what should I pack?")
    page.wait_for_function(
        "document.getElementById('activity-label').textContent.includes('searching your past conversations')"
    )
    lengths: list[int] = []

    def sample() -> bool:
        text = page.evaluate("(document.querySelector('.msg.assistant') || {}).innerText || ''")
        if text and (not lengths or lengths[-1] != len(text)):
            lengths.append(len(text))
        return "Done." in text and page.is_hidden("#activity")

    eventually(sample, "the streamed reply to complete", within_s=15)
    assert len([n for n in lengths[:-1] if n > 0]) >= 3, lengths  # visible steps before the whole reply
    reply = page.locator(".msg.assistant").last
    assert reply.locator("table td").all_inner_texts() == ["socks", "3", "tea", "1"]
    assert reply.locator("h2").inner_text() == "Packing list"
    assert reply.locator(".code-head span").inner_text() == "python"
    assert "monospace" in reply.locator("pre code").evaluate("e => getComputedStyle(e).fontFamily")
    link = reply.locator("a", has_text="the docs")
    assert link.get_attribute("rel") == "noopener noreferrer" and link.get_attribute("target") == "_blank"
    reply.locator("button.copy").click()
    page.wait_for_function("document.querySelector('button.copy').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == 'print("ready")\n'
    streamed = reply.inner_html()
    page.reload()  # what stays on screen after streaming is the stored reply's rendering
    page.wait_for_selector(".msg.assistant table")
    assert page.locator(".msg.assistant").last.inner_html() == streamed.replace("Copied", "Copy")
    page.context.close()


XSS = """Try these:
<img src=x onerror="window.__xss = 'img'"> and <script>window.__xss = 'script'</script>
[click me](javascript:window.__xss='link') and <a href="#" onclick="window.__xss='attr'">attr</a>
<svg onload="window.__xss='svg'"></svg> <iframe src="javascript:window.__xss='frame'"></iframe>
![beacon](BEACON) and a [data link](data:text/html,<script>alert(1)</script>)

```html
<img src=x onerror="window.__xss='code'">
```"""


def test_model_output_cannot_run_script_or_load_anything(browser: Browser, world: ChatWorld) -> None:
    beacon = f"{world.model.server.origin}/beacon.png"
    world.model.script(FakeReply(text=XSS.replace("BEACON", beacon), chunks=6, chunk_delay_s=0.05))
    page = _open(browser, world)
    _send(page, "show me something tricky")
    page.wait_for_function("document.querySelectorAll('.msg.assistant .code').length === 1")
    page.wait_for_selector("#activity", state="hidden")
    page.reload()  # the stored reply, rendered from state.db, as well as the streamed one
    page.wait_for_selector(".msg.assistant .code")
    assert page.evaluate("window.__xss") is None
    log = page.locator("#log")
    assert log.locator("img, script, iframe, svg, [onerror], [onclick], [onload]").count() == 0
    assert log.locator('a[href^="javascript:"], a[href^="data:"]').count() == 0
    assert "<img src=x" in page.locator(".msg.assistant pre code").inner_text()  # shown, not run
    assert log.locator(f'a[href="{beacon}"]').count() == 1  # the image is a link: loaded only on a click
    assert not [r for r in world.model.requests if r.path == "/beacon.png"]
    page.context.close()
