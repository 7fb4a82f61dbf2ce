"""Golden tests for Markdown -> Telegram HTML, and the chunking guarantees a user notices."""

from __future__ import annotations

import re

import pytest

from adapters.telegram import TELEGRAM_LIMIT, render_telegram
from tests.adapters.fakes.telegram_server import telegram_html_text, utf16_len


def one(markdown: str) -> str:
    chunks = render_telegram(markdown)
    assert len(chunks) == 1, chunks
    return chunks[0]


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("# Title", "<b>Title</b>"),
        ("### Small *heading*", "<b>Small <i>heading</i></b>"),
        ("**bold** and *italic* and ~~gone~~", "<b>bold</b> and <i>italic</i> and <s>gone</s>"),
        ("***both***", "<i><b>both</b></i>"),
        ("[docs](https://example.org/a?x=1&y=2)", '<a href="https://example.org/a?x=1&amp;y=2">docs</a>'),
        ("[local](./file.md) stays text", "local stays text"),
        ("use `a < b && c`", "use <code>a &lt; b &amp;&amp; c</code>"),
        ("5 < 6 & 7 > 3", "5 &lt; 6 &amp; 7 &gt; 3"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("- one\n- **two**\n  - nested", "• one\n• <b>two</b>\n  • nested"),
        ("1. first\n2. second", "1. first\n2. second"),
        ("> quoted *words*", "<blockquote>quoted <i>words</i></blockquote>"),
        ("line one\nline two", "line one\nline two"),
        ("---", "———"),
    ],
)
def test_inline_and_block_markup(markdown: str, html: str) -> None:
    assert one(markdown) == html


def test_fenced_code_keeps_language_and_escapes() -> None:
    markdown = '```python\nif a < b:\n    print("&")\n```'
    assert one(markdown) == '<pre><code class="language-python">if a &lt; b:\n    print("&amp;")</code></pre>'


def test_fence_without_language_is_plain_pre() -> None:
    assert one("```\nraw <text>\n```") == "<pre>raw &lt;text&gt;</pre>"


def test_table_becomes_aligned_preformatted_text() -> None:
    markdown = "| name | qty |\n|------|-----|\n| apple | 3 |\n| <pear> | 10 |"
    assert one(markdown) == ("<pre>name   | qty\n-------+----\napple  | 3\n&lt;pear&gt; | 10</pre>")


def test_paragraphs_are_separated_by_a_blank_line() -> None:
    assert one("first\n\nsecond") == "first\n\nsecond"


def test_every_golden_output_is_accepted_by_the_bot_api() -> None:
    markdown = "# H\n\n**b** *i* `c` [l](https://x.y) <tag> & more\n\n```js\nx<1\n```\n\n| a |\n|---|\n| 1 |"
    for chunk in render_telegram(markdown):
        telegram_html_text(chunk)


def _reply_with_code(total: int) -> str:
    code = "\n".join(f"    value_{i} = compute({i}) < limit && ok" for i in range(50))
    prose = " ".join(f"word{i}" for i in range(total // 7))
    return f"{prose[: total // 2]}\n\n```python\n{code}\n```\n\n{prose[: total // 2]}"


def test_a_10000_character_reply_is_split_into_valid_chunks_with_fences_intact() -> None:
    markdown = _reply_with_code(10_000)
    assert len(markdown) >= 10_000
    chunks = render_telegram(markdown)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert utf16_len(chunk) <= TELEGRAM_LIMIT
        telegram_html_text(chunk)  # balanced tags, escaped text: the Bot API accepts it
        assert chunk.count("<pre>") == chunk.count("</pre>")
    # The code block fits in one message, so it is never split across messages.
    code_chunks = [c for c in chunks if "language-python" in c]
    assert len(code_chunks) == 1
    assert code_chunks[0].count("value_") == 50
    visible = "".join(telegram_html_text(c) for c in chunks)
    assert visible.count("value_") == 50


def test_a_code_block_longer_than_a_message_is_closed_and_reopened_on_line_boundaries() -> None:
    lines = [f"print('line {i:04d}')  # <{i}>" for i in range(400)]
    chunks = render_telegram("```py\n" + "\n".join(lines) + "\n```")
    assert len(chunks) >= 3
    seen: list[str] = []
    for chunk in chunks:
        assert utf16_len(chunk) <= TELEGRAM_LIMIT
        assert chunk.startswith('<pre><code class="language-py">')
        assert chunk.endswith("</code></pre>")
        seen += telegram_html_text(chunk).split("\n")
    assert seen == lines  # every line intact, in order, none cut in the middle


def test_an_entity_is_never_left_open_when_a_long_bold_paragraph_is_split() -> None:
    chunks = render_telegram("**" + " ".join(["bold"] * 2000) + "**")
    assert len(chunks) >= 2
    for chunk in chunks:
        assert chunk.startswith("<b>") and chunk.endswith("</b>")
        telegram_html_text(chunk)


def test_limit_counts_utf16_units_for_astral_characters() -> None:
    text = "😀 " * 3000  # each emoji is two UTF-16 units
    chunks = render_telegram(text)
    assert all(utf16_len(chunk) <= TELEGRAM_LIMIT for chunk in chunks)
    assert len(chunks) >= 3
    assert sum(c.count("😀") for c in chunks) == 3000


def test_paragraph_boundaries_are_preferred_over_cutting_a_paragraph() -> None:
    paragraphs = [f"Paragraph {i}: " + " ".join(["text"] * 150) for i in range(12)]
    chunks = render_telegram("\n\n".join(paragraphs))
    for chunk in chunks:
        assert re.fullmatch(r"(Paragraph \d+: (text ?)+)(\n\nParagraph \d+: (text ?)+)*", chunk), chunk[:80]
