"""A rendered chunk reduced to plain text: the one re-send delivery makes after a BadFormatError."""

from __future__ import annotations

import html
import re

_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_MARKUP = re.compile(r"(\*\*|__|~~|`{1,3}|\\(?=[\\_*\[\]()~`>#+\-=|{}.!]))")


def plain_text(chunk: str) -> str:
    """Drop HTML tags, unescape entities, and remove Markdown emphasis and MarkdownV2 escapes."""
    return html.unescape(_MARKUP.sub("", _TAG.sub("", chunk)))
