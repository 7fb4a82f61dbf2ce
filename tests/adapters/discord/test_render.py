"""Golden tests for Markdown -> Discord markdown, and the chunking guarantees a user notices."""

from __future__ import annotations

import re

import pytest

from adapters.discord import DISCORD_LIMIT, render_discord
from tests.adapters.fakes.discord_server import discord_content


def one(markdown: str) -> str:
    chunks = render_discord(markdown)
    assert len(chunks) == 1, chunks
    return chunks[0]


@pytest.mark.parametrize(
    ("markdown", "rendered"),
    [
        ("# Title", "**Title**"),
        ("### Small *heading*", "**Small *heading***"),
        ("**bold** and *italic* and ~~gone~~", "**bold** and *italic* and ~~gone~~"),
        ("[docs](https://example.org/a?x=1&y=(2))", "[docs](https://example.org/a?x=1&y=%282%29)"),
        ("[local](./file.md) stays text", "local stays text"),
        ("use `a_b * c`", "use `a_b * c`"),
        ("a `tick`` inside`", "a `tick\u02cb\u02cb inside`"),
        ("2 * 3 = 6, snake_case, ~tilde~, a|b", "2 \\* 3 = 6, snake\\_case, \\~tilde\\~, a\\|b"),
        ("<@123> and <script>", "\\<@123> and \\<script>"),
        ("see https://example.org/a_b_c now", "see https://example.org/a_b_c now"),
        ("\\# not a heading", "\\# not a heading"),
        ("- one\n- **two**\n  - nested", "• one\n• **two**\n  • nested"),
        ("1. first\n2. second", "1. first\n2. second"),
        ("> quoted *words*\n> second line", "> quoted *words*\n> second line"),
        ("line one\nline two", "line one\nline two"),
        ("---", "———"),
    ],
)
def test_inline_and_block_markup(markdown: str, rendered: str) -> None:
    assert one(markdown) == rendered


def test_fenced_code_keeps_language_and_content_verbatim() -> None:
    markdown = '```python\nif a < b and c_d:\n    print("*")\n```'
    assert one(markdown) == '```python\nif a < b and c_d:\n    print("*")\n```'


def test_a_fence_inside_code_cannot_close_the_block() -> None:
    rendered = one("````md\n```js\nx\n```\n````")
    assert rendered.count("```") == 2 and rendered.startswith("```md\n") and rendered.endswith("\n```")


def test_table_becomes_an_aligned_code_block() -> None:
    markdown = "| name | qty |\n|------|-----|\n| apple | 3 |\n| pear_x | 10 |"
    assert one(markdown) == "```\nname   | qty\n-------+----\napple  | 3\npear_x | 10\n```"


def test_paragraphs_are_separated_by_a_blank_line() -> None:
    assert one("first\n\nsecond") == "first\n\nsecond"


def test_a_long_code_block_is_closed_and_reopened_with_its_language_in_every_chunk() -> None:
    code = "\n".join(f"let value_{i} = compute({i});" for i in range(400))
    chunks = render_discord("Intro.\n\n```rust\n" + code + "\n```\n\nOutro.")
    assert len(chunks) >= 6 and all(len(chunk) <= DISCORD_LIMIT for chunk in chunks)
    with_code = [chunk for chunk in chunks if "```" in chunk]
    assert all(chunk.count("```rust\n") == 1 and chunk.count("```") == 2 for chunk in with_code)
    assert chunks[0].startswith("Intro.") and chunks[-1].endswith("Outro.")
    pieces = re.findall(r"```rust\n(.*?)\n```", "\n".join(chunks), re.DOTALL)
    assert "\n".join(pieces) == code  # no line lost, duplicated or cut mid-line


def test_long_prose_splits_between_paragraphs_and_keeps_every_word() -> None:
    paragraphs = [f"Paragraph {i}: " + "word " * 60 for i in range(40)]
    chunks = render_discord("\n\n".join(paragraphs))
    assert all(len(chunk) <= DISCORD_LIMIT for chunk in chunks)
    assert all(chunk.startswith("Paragraph") for chunk in chunks)
    assert " ".join(" ".join(chunks).split()) == " ".join(" ".join(paragraphs).split())


def test_bold_split_across_chunks_is_closed_and_reopened() -> None:
    chunks = render_discord("**" + ("strong words " * 400).strip() + "**")
    assert len(chunks) >= 3
    assert all(chunk.startswith("**") and chunk.endswith("**") for chunk in chunks)


def test_every_golden_output_is_accepted_by_discord() -> None:
    for markdown in ("# T", "```py\nx\n```", "| a |\n|---|\n| 1 |", "*a* **b** ~~c~~", "> q"):
        for chunk in render_discord(markdown):
            discord_content(chunk)
