"""Markdown to Slack mrkdwn, chunked to at most 4,000 characters per message; pure.

Invariants: ``&``, ``<`` and ``>`` are escaped everywhere (Slack's only escapes), so model text can never
form a control sequence such as ``<!channel>``; links are ``<url|text>`` and only for http(s)/mailto;
code blocks are bare ``` fences (Slack shows a language tag as text) closed and reopened when a block is
split, and a literal ``` in text or code is broken with a zero-width space so it never opens a fence;
headings are bold; quotes prefix every line with ``>``.
"""

from __future__ import annotations

from adapters.render import Style, chunk_blocks, parse_markdown

SLACK_CHUNK_LIMIT = 4000
"""chat.postMessage takes ~40,000 characters, but readers and chat.update stop at 4,000."""
_LINK_SCHEMES = ("http://", "https://", "mailto:")
_MARKS = {"bold": "*", "italic": "_", "strike": "~", "code": "`"}


def escape_mrkdwn(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _linkable(href: str) -> bool:
    return href.lower().startswith(_LINK_SCHEMES)


def _link_target(href: str) -> str:
    # '|' ends the target inside <url|text>; percent-encoding keeps the URL equivalent.
    return escape_mrkdwn(href).replace("|", "%7C")


class SlackMrkdwn:
    """Slack's ``mrkdwn`` text dialect."""

    def escape(self, text: str, styles: tuple[Style, ...]) -> str:
        # Slack has no backslash escapes: a literal ``` would open or close a fence, and a backtick would end
        # inline code, so those are broken up with look-alikes instead.
        escaped = escape_mrkdwn(text).replace("```", "``\u200b`")
        if styles and styles[-1].kind == "code":
            escaped = escaped.replace("`", "\u02cb")
        if any(style.kind == "quote" for style in styles):
            escaped = escaped.replace("\n", "\n> ")
        return escaped

    def open(self, style: Style) -> str:
        if style.kind == "link":
            return f"<{_link_target(style.value)}|" if _linkable(style.value) else ""
        if style.kind == "pre":
            return "```\n"
        if style.kind == "quote":
            return "> "
        return _MARKS[style.kind]

    def close(self, style: Style) -> str:
        if style.kind == "link":
            return ">" if _linkable(style.value) else ""
        if style.kind == "pre":
            return "\n```"
        if style.kind == "quote":
            return ""
        return _MARKS[style.kind]


def render_slack(markdown: str, limit: int = SLACK_CHUNK_LIMIT) -> list[str]:
    """``markdown`` as mrkdwn chunks, each at most ``limit`` characters including markup."""
    return chunk_blocks(parse_markdown(markdown), SlackMrkdwn(), limit, len)
