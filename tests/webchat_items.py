"""What a web chat feed item shows as text: its sanitised HTML with the tags dropped and entities decoded."""

from __future__ import annotations

import html
import re


def shown_text(fragment: str) -> str:
    """The text a browser shows for an HTML fragment of the web chat."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()
