"""The web chat in a real browser, against a real ``mnemogate serve`` whose model streams from a fake server.

One gateway serves the whole module (its home keeps everything the earlier tests did); each test opens its
own browser context, so each is a new visitor with its own cookie unless it says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    screenshot(page, "webchat-markdown")
    reply.locator("button.copy").click()
    page.wait_for_function("document.querySelector('button.copy').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == 'print("ready")\n'
    streamed = reply.inner_html()
    page.reload()  # what stays on screen after streaming is the stored reply's rendering
    page.wait_for_selector(".msg.assistant table")
    assert page.locator(".msg.assistant").last.inner_html() == streamed.replace("Copied", "Copy")
    page.context.close()


def test_stop_ends_a_reply_being_written(browser: Browser, world: ChatWorld) -> None:
    story = " ".join(f"word{n}" for n in range(300))
    world.model.script(FakeReply(text=story, chunks=60, chunk_delay_s=0.1))
    page = _open(browser, world)
    _send(page, "tell me a very long story")
    page.wait_for_function(
        "((document.querySelector('.msg.assistant') || {}).innerText || '').includes('word1 ')"
    )
    page.click("#stop")
    _wait_text(page, "Stopped.")
    page.wait_for_selector("#activity", state="hidden")
    shown = page.locator(".msg.assistant").first.inner_text()
    assert "word1" in shown and "word299" not in shown
    assert page.locator(".msg.user.command", has_text="/stop").count() == 1
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


def _log_text(page: Page) -> str:
    return str(page.locator("#log").inner_text())


def _wait_text(page: Page, text: str) -> None:
    page.wait_for_function("t => document.getElementById('log').innerText.includes(t)", arg=text)


def _wait_new_chat(page: Page, old: str) -> None:
    """The new conversation is on screen: its notice shown, the old one's ``old`` text gone."""
    page.wait_for_function(
        "old => { const t = document.getElementById('log').innerText;"
        " return t.includes('Started a new conversation') && !t.includes(old); }",
        arg=old,
    )


def _conversation_titles(page: Page) -> list[str]:
    return list(page.locator("#conversations .open span").all_inner_texts())


def test_new_chat_switch_back_continue_rename_search_and_reload(browser: Browser, world: ChatWorld) -> None:
    page = _open(browser, world)
    world.model.script(FakeReply.say("Alpha answer."))
    _send(page, "first topic alpha")
    _wait_text(page, "Alpha answer.")
    _send(page, "/status")
    _wait_text(page, "Segments: 1")
    page.click("#new-chat")
    _wait_new_chat(page, "Alpha answer.")
    world.model.script(FakeReply.say("Beta answer."))
    _send(page, "second topic beta")
    _wait_text(page, "Beta answer.")
    page.locator("#conversations .open span", has_text="second topic beta").wait_for()
    assert _conversation_titles(page) == ["second topic beta", "first topic alpha"]

    page.locator("#conversations .open", has_text="first topic alpha").click()
    _wait_text(page, "Alpha answer.")
    assert "Beta answer." not in _log_text(page) and "Segments: 1" in _log_text(page)
    world.model.script(FakeReply.say("Alpha again."))
    _send(page, "more on alpha")
    _wait_text(page, "Alpha again.")
    last_request = world.model.requests[-1].body
    assert "first topic alpha" in str(last_request["messages"])  # continued with its history

    page.locator("#conversations li", has_text="first topic alpha").locator(".rename").click()
    page.fill("#conversations input", "Alpha trip")
    page.keyboard.press("Enter")
    page.locator("#conversations .open span", has_text="Alpha trip").wait_for()

    page.reload()
    page.wait_for_selector(".msg.assistant")
    text = _log_text(page)
    everything = ("first topic alpha", "Alpha answer.", "/status", "Segments: 1", "more on alpha", "again.")
    assert [line for line in everything if line not in text] == []
    assert "Beta answer." not in text
    assert _conversation_titles(page) == ["Alpha trip", "second topic beta"]
    assert page.locator("#title").inner_text() == "Alpha trip"

    page.fill("#search", "beta")
    page.keyboard.press("Enter")
    page.locator("#search-results button", has_text="second topic beta").click()
    _wait_text(page, "Beta answer.")
    assert "Alpha answer." not in _log_text(page)
    page.context.close()


def test_deleting_a_memory_entry_keeps_it_out_of_the_next_conversations_prompt(
    browser: Browser, world: ChatWorld
) -> None:
    page = _open(browser, world)
    remember = FakeToolCall("memory", {"action": "add", "target": "user", "content": "Prefers green tea"})
    world.model.script(FakeReply(tool_calls=(remember,)), FakeReply.say("Noted."))
    _send(page, "I like green tea, remember it")
    _wait_text(page, "Noted.")
    page.click("#new-chat")
    _wait_new_chat(page, "Noted.")
    world.model.script(FakeReply.say("Hello again."))
    _send(page, "hello")
    _wait_text(page, "Hello again.")
    assert "Prefers green tea" in world.model.system_prompts()[-1]

    page.click("#memory-open")
    entry = page.locator("#memory .store li", has_text="Prefers green tea")
    entry.wait_for()
    assert page.locator("#memory .store").first.locator(".usage").inner_text().startswith("17 / ")
    entry.locator("button.delete").click()
    entry.locator("button.delete", has_text="Really delete?").click()
    entry.wait_for(state="detached")
    assert "Nothing yet." in page.locator("#memory .store").first.inner_text()
    page.click("#memory-close")

    page.click("#new-chat")
    _wait_new_chat(page, "Hello again.")
    world.model.script(FakeReply.say("Fresh start."))
    _send(page, "what do you know?")
    _wait_text(page, "Fresh start.")
    prompt = world.model.system_prompts()[-1]
    assert "Prefers green tea" not in prompt and "USER PROFILE" not in prompt
    page.context.close()


def test_on_a_phone_the_chat_fits_and_the_conversations_open_from_the_menu(
    browser: Browser, world: ChatWorld
) -> None:
    page = _open(browser, world, **PHONE)
    assert page.locator("#sidebar").evaluate("e => e.getBoundingClientRect().right") <= 0  # tucked away
    world.model.script(FakeReply.say("A reply that fits on a small screen, with `code` in it."))
    _send(page, "hi from my phone")
    _wait_text(page, "fits on a small screen")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width  # nothing scrolls sideways
    box = page.locator("#send").bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390 and box["y"] + box["height"] <= 844
    screenshot(page, "webchat-phone")
    page.click("#open-side")
    page.wait_for_function("document.getElementById('sidebar').getBoundingClientRect().left >= 0")
    assert page.locator("#open-side").get_attribute("aria-expanded") == "true"
    screenshot(page, "webchat-phone-conversations")
    page.keyboard.press("Escape")
    page.context.close()


def test_a_message_sent_while_the_gateway_is_down_is_answered_once_after_retry(
    browser: Browser, world: ChatWorld
) -> None:
    page = _open(browser, world)
    world.stop()
    page.wait_for_function("document.getElementById('status').dataset.state === 'disconnected'")
    assert "reconnecting" in page.locator("#status").inner_text()
    _send(page, "are you there?")
    failed = page.locator(".msg.user.failed", has_text="are you there?")
    failed.locator("button.retry").wait_for()
    assert "Not sent" in failed.inner_text()
    world.model.script(FakeReply.say("Yes, once."))
    world.start()
    page.wait_for_function("document.getElementById('status').dataset.state === 'connected'", timeout=30_000)
    failed.locator("button.retry").click()
    _wait_text(page, "Yes, once.")
    page.reload()
    _wait_text(page, "Yes, once.")
    text = _log_text(page)
    assert text.count("are you there?") == 1 and text.count("Yes, once.") == 1
    page.context.close()
