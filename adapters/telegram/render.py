"""Markdown to Telegram HTML, chunked to at most 4,096 UTF-16 code units per message; pure.

Invariants: every chunk is valid Telegram HTML on its own (only ``<``, ``>`` and ``&`` are escaped, tags
are balanced per chunk, a code block split across chunks is closed and reopened with its language);
only http(s), tg and mailto links become ``<a>`` tags (Telegram rejects others); headings are bold.
"""

from __future__ import annotations

import html
import re

from adapters.render import Style, chunk_blocks, parse_markdown
from gateway.contracts import text_length

TELEGRAM_LIMIT = 4096
_LINK_SCHEMES = ("http://", "https://", "tg://", "mailto:")
_LANGUAGE = re.compile(r"[^A-Za-z0-9_+#.-]")
_TAGS = {"bold": "b", "italic": "i", "strike": "s", "code": "code", "quote": "blockquote"}


def _linkable(href: str) -> bool:
    return href.lower().startswith(_LINK_SCHEMES)


class TelegramHtml:
    """The Telegram Bot API ``parse_mode=HTML`` dialect."""

    def escape(self, text: str, styles: tuple[Style, ...]) -> str:
        return html.escape(text, quote=False)

    def open(self, style: Style) -> str:
        if style.kind == "link":
            return f'<a href="{html.escape(style.value, quote=True)}">' if _linkable(style.value) else ""
        if style.kind == "pre":
            language = _LANGUAGE.sub("", style.value)
            return f'<pre><code class="language-{language}">' if language else "<pre>"
        return f"<{_TAGS[style.kind]}>"

    def close(self, style: Style) -> str:
        if style.kind == "link":
            return "</a>" if _linkable(style.value) else ""
        if style.kind == "pre":
            return "</code></pre>" if _LANGUAGE.sub("", style.value) else "</pre>"
        return f"</{_TAGS[style.kind]}>"


def utf16_length(text: str) -> int:
    return text_length(text, "utf16")


def render_telegram(markdown: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """``markdown`` as Telegram HTML chunks, each at most ``limit`` UTF-16 units including markup."""
    return chunk_blocks(parse_markdown(markdown), TelegramHtml(), limit, utf16_length)
