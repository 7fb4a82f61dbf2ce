"""Golden tests for Markdown -> Slack mrkdwn, and the chunking guarantees a Slack user notices."""

from __future__ import annotations

import pytest

from adapters.slack import SLACK_CHUNK_LIMIT, render_slack
from tests.adapters.fakes.slack_server import slack_mrkdwn_text


def one(markdown: str) -> str:
    chunks = render_slack(markdown)
    assert len(chunks) == 1, chunks
    return chunks[0]


GOLDEN = [
    ("# Title", "*Title*"),
    ("### Small *heading*", "*Small _heading_*"),
    ("**bold** and *italic* and ~~gone~~", "*bold* and _italic_ and ~gone~"),
    ("***both***", "_*both*_"),
    ("[docs](https://example.org/a?x=1&y=2)", "<https://example.org/a?x=1&amp;y=2|docs>"),
    ("[pipe](https://x.org/p|q)", "<https://x.org/p%7Cq|pipe>"),
    ("<https://auto.link>", "<https://auto.link|https://auto.link>"),
    ("[local](./file.md) stays text", "local stays text"),
    ("use `a < b && c`", "use `a &lt; b &amp;&amp; c`"),
    ("5 < 6 & 7 > 3", "5 &lt; 6 &amp; 7 &gt; 3"),
    ("<!channel> ping <@U123>", "&lt;!channel&gt; ping &lt;@U123&gt;"),
    ("- one\n- **two**\n  - nested", "• one\n• *two*\n  • nested"),
    ("1. first\n2. second", "1. first\n2. second"),
    ("> quoted *words*\n> second line", "> quoted _words_\n> second line"),
    ("line one\nline two", "line one\nline two"),
    ("first\n\nsecond", "first\n\nsecond"),
    ("---", "———"),
    ('```python\nif a < b:\n    print("&")\n```', '```\nif a &lt; b:\n    print("&amp;")\n```'),
    ("``a`b``", "`a\u02cbb`"),
    ("````md\n```py\nx\n```\n````", "```\n``\u200b`py\nx\n``\u200b`\n```"),
    ("say \\`\\`\\` now", "say ``\u200b` now"),
    (
        "| name | qty |\n|------|-----|\n| apple | 3 |\n| <pear> | 10 |",
        "```\nname   | qty\n-------+----\napple  | 3\n&lt;pear&gt; | 10\n```",
    ),
]


@pytest.mark.parametrize(("markdown", "mrkdwn"), GOLDEN, ids=[md[:24] for md, _ in GOLDEN])
def test_golden_markup(markdown: str, mrkdwn: str) -> None:
    assert one(markdown) == mrkdwn


def test_model_text_can_never_ping_a_channel_or_forge_a_link() -> None:
    text = "Hey <!here> and <https://evil.example|click me> & <@U999>"
    [chunk] = render_slack(text)
    assert "<!" not in chunk and "<https" not in chunk and "<@" not in chunk
    assert slack_mrkdwn_text(chunk) == text  # shown literally, exactly as the model wrote it


@pytest.mark.parametrize("markdown", [md for md, _ in GOLDEN])
def test_every_golden_output_is_accepted_by_slack(markdown: str) -> None:
    for chunk in render_slack(markdown):
        slack_mrkdwn_text(chunk)


def test_a_long_code_block_is_split_into_closed_fences_without_losing_a_line() -> None:
    lines = [f"line {i:04d} <tag> & value" for i in range(400)]
    chunks = render_slack("```\n" + "\n".join(lines) + "\n```")
    assert len(chunks) >= 3
    for chunk in chunks:
        assert len(chunk) <= SLACK_CHUNK_LIMIT
        assert chunk.startswith("```\n") and chunk.endswith("\n```")
    visible = "\n".join(slack_mrkdwn_text(chunk).strip("`\n") for chunk in chunks)
    assert visible.split("\n") == lines


def test_long_prose_splits_between_paragraphs_and_bold_is_reopened() -> None:
    markdown = (
        "\n\n".join(f"Paragraph {i} " + "text " * 150 for i in range(12))
        + "\n\n**"
        + ("bold " * 1200).strip()
        + "**"
    )
    chunks = render_slack(markdown)
    assert all(len(chunk) <= SLACK_CHUNK_LIMIT for chunk in chunks)
    assert all(chunk.startswith("Paragraph") or chunk.startswith("*") for chunk in chunks)
    bold = [chunk for chunk in chunks if chunk.startswith("*")]
    assert len(bold) >= 2 and all(chunk.endswith("*") for chunk in bold)
