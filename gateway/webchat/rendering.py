"""Markdown to the web chat's HTML: markdown-it-py renders, nh3 (ammonia) sanitises, on the server.

Invariants: the output holds only the tags and attributes listed here — no script, style, iframe, form,
image or media element, no event-handler or style attribute, no ``id``; links keep only http(s)/mailto
targets and always carry ``rel="noopener noreferrer"`` and ``target="_blank"``; a Markdown image becomes
a link to it (nothing remote loads without a click); raw HTML in the Markdown is shown as text; a code
block's ``class`` is kept only in the form ``language-<name>``. Rendering the same text always gives the
same HTML, so a streamed snapshot of the whole reply and the stored reply render alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

_TAGS = frozenset(
    {
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
        "pre", "code", "em", "strong", "del", "s", "a", "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}, "ol": {"start"}}
_LANGUAGE_CLASS = re.compile(r"^language-[A-Za-z0-9_+#.-]{1,32}$")
_CLEANER = nh3.Cleaner(
    tags=set(_TAGS),
    clean_content_tags={"script", "style"},
    attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    attribute_filter=lambda tag, name, value: _kept(tag, name, value),
)


def _kept(tag: str, name: str, value: str) -> str | None:
    if tag == "code" and name == "class":
        return value if _LANGUAGE_CLASS.match(value) else None
    return value


def _image_as_link(
    renderer: RendererHTML, tokens: Sequence[Token], index: int, options: OptionsDict, env: EnvType
) -> str:
    """An image is shown as a link to it: loading it is the reader's choice, never automatic."""
    token = tokens[index]
    source = str(token.attrs.get("src", ""))
    label = renderer.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<a href="{escape(source)}">🖼 {escape(label)}</a>'


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "breaks": True, "langPrefix": "language-"})
    parser.enable(["table", "strikethrough"])
    parser.add_render_rule("image", _image_as_link)
    return parser


_PARSER = _parser()


def render_html(markdown: str) -> str:
    """``markdown`` (a model's reply, a notice) as sanitised HTML for the chat page."""
    return _CLEANER.clean(_PARSER.render(markdown)).strip()


def sanitise_html(html: str) -> str:
    """``html`` cut down to what ``render_html`` may produce (idempotent on its output)."""
    return _CLEANER.clean(html)


def plain_html(text: str) -> str:
    """Text shown as written (a person's own message): escaped, line breaks kept."""
    return escape(text).replace("\n", "<br>")
