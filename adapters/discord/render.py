"""Markdown to Discord's own markdown, chunked to at most 2,000 characters per message; pure.

Invariants: every chunk renders on its own (a code block split across chunks is closed with its fence
and reopened with the same language; bold, italic, strike, quote and links are closed and reopened the
same way); literal text never turns into markup (Discord's specials are backslash-escaped, a ``` inside
a code block is broken with a zero-width space so it cannot close the fence, and a backtick inside
inline code becomes U+02CB); only http(s) links become masked links; headings are bold.
"""

from __future__ import annotations

import re

from adapters.render import Style, chunk_blocks, parse_markdown

DISCORD_LIMIT = 2000
_LINK_SCHEMES = ("http://", "https://")
_LANGUAGE = re.compile(r"[^A-Za-z0-9_+#.-]")
_SPECIALS = re.compile(r"([\\*_~`|\[\]<])")
# Only at the start of a line do these start a quote, heading or list (or "-#" subtext).
_LINE_START = re.compile(r"^([>#-])", re.MULTILINE)
# A bare URL stays clickable only unescaped; markdown-it leaves it as plain text.
_BARE_URL = re.compile(r"(https?://[^\s<>()\[\]]+)")
_FENCE = "```"
_MARKS = {"bold": "**", "italic": "*", "strike": "~~", "code": "`"}
_URL_UNSAFE = {" ": "%20", ")": "%29", "(": "%28", "<": "%3C", ">": "%3E"}


def _linkable(href: str) -> bool:
    return href.lower().startswith(_LINK_SCHEMES)


def _kinds(styles: tuple[Style, ...]) -> set[str]:
    return {style.kind for style in styles}


def _safe_url(href: str) -> str:
    return "".join(_URL_UNSAFE.get(ch, ch) for ch in href)


class DiscordMarkdown:
    """Discord's message markdown (``**bold**``, ``*italic*``, ``~~strike~~``, fences, ``> quote``)."""

    def escape(self, text: str, styles: tuple[Style, ...]) -> str:
        kinds = _kinds(styles)
        if "pre" in kinds:
            return text.replace(_FENCE, "``\u200b`")
        if "code" in kinds:
            return text.replace("`", "\u02cb").replace("\n", " ")
        escaped = "".join(
            part if index % 2 else _LINE_START.sub(r"\\\1", _SPECIALS.sub(r"\\\1", part))
            for index, part in enumerate(_BARE_URL.split(text))
        )
        if "quote" in kinds:
            escaped = escaped.replace("\n", "\n> ")
        return escaped

    def open(self, style: Style) -> str:
        if style.kind == "link":
            return "[" if _linkable(style.value) else ""
        if style.kind == "pre":
            return f"{_FENCE}{_LANGUAGE.sub('', style.value)}\n"
        if style.kind == "quote":
            return "> "
        return _MARKS[style.kind]

    def close(self, style: Style) -> str:
        if style.kind == "link":
            return f"]({_safe_url(style.value)})" if _linkable(style.value) else ""
        if style.kind == "pre":
            return f"\n{_FENCE}"
        if style.kind == "quote":
            return ""
        return _MARKS[style.kind]


def render_discord(markdown: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """``markdown`` as Discord-markdown chunks, each at most ``limit`` characters including markup."""
    return chunk_blocks(parse_markdown(markdown), DiscordMarkdown(), limit, len)
