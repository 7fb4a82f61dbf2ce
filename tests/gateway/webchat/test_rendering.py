"""Replies as the web chat shows them: Markdown rendered on the server, and nothing a model writes can run
script, load remote content or restyle the page."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.webchat.rendering import plain_html, render_html, sanitise_html

_ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
    "pre", "code", "em", "strong", "del", "s", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def test_markdown_becomes_the_html_a_reader_expects() -> None:
    html = render_html(
        "# Title\n\nSome **bold**, *em*, ~~gone~~ and `code`.\n\n- one\n- two\n\n1. first\n\n"
        "> quoted\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n```python\nprint('<hi>')\n```\n\n"
        "[docs](https://example.org/x?a=1&b=2)\nnext line"
    )
    assert "<h1>Title</h1>" in html
    assert "<strong>bold</strong>" in html and "<em>em</em>" in html and "<s>gone</s>" in html
    assert "<code>code</code>" in html and "<ul>\n<li>one</li>" in html and "<ol>" in html
    assert "<blockquote>\n<p>quoted</p>\n</blockquote>" in html
    assert "<th>a</th>" in html and "<td>2</td>" in html and "style" not in html
    assert "<pre><code class=\"language-python\">print('&lt;hi&gt;')\n</code></pre>" in html
    assert (
        '<a href="https://example.org/x?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">docs</a><br>'
        in html
    )


PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](javascript:alert(1))",
    "![beacon](https://tracker.example/p.gif)",
    '<iframe src="https://evil.example"></iframe>',
    "<style>body{display:none}</style>",
    '<div style="background:url(https://evil.example/x)">x</div>',
    '<form action="https://evil.example"><input name=a></form>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '```"><img src=x onerror=alert(1)>\ncode\n```',
    "<details open ontoggle=alert(1)>",
    '<a href="https://ok.example" onclick="alert(1)" id="log">x</a>',
    "<object data=x></object><embed src=x><base href=//evil.example>",
]


class _Elements(HTMLParser):
    """The elements a browser would build from the HTML (escaped text stays text)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    return parser.found


_SAFE_ATTRIBUTES = {"href", "title", "target", "rel", "class", "start"}


@pytest.mark.parametrize("payload", PAYLOADS)
def test_nothing_a_model_writes_can_run_or_load_anything(payload: str) -> None:
    found = elements(render_html(f"before\n\n{payload}\n\nafter"))
    assert {tag for tag, _ in found} <= _ALLOWED_TAGS, found
    for tag, attributes in found:
        assert set(attributes) <= _SAFE_ATTRIBUTES, (tag, attributes)
        href = (attributes.get("href") or "").strip().lower()
        assert not href or href.startswith(("http://", "https://", "mailto:")), href
        if tag == "a":
            assert attributes["rel"] == "noopener noreferrer" and attributes["target"] == "_blank"


def test_an_image_is_a_link_to_it_and_a_code_class_is_only_a_language() -> None:
    html = render_html('![a chart](https://example.org/chart.png)\n\n```x" onmouseover="y\nz\n```')
    assert '<a href="https://example.org/chart.png" target="_blank" rel="noopener noreferrer">' in html
    assert "🖼 a chart" in html
    assert "<pre><code>z\n</code></pre>" in html  # an invalid language name is dropped, not passed on


def test_a_persons_own_text_is_shown_as_written() -> None:
    assert plain_html("<b>hi</b>\n**there**") == "&lt;b&gt;hi&lt;/b&gt;<br>**there**"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_rendering_is_stable_under_a_second_sanitising(text: str) -> None:
    """The page gets HTML sanitised twice (render, then the channel): the second pass changes nothing."""
    html = render_html(text)
    assert sanitise_html(html) == html
