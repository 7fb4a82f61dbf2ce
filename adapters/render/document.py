"""The platform-neutral document model: Markdown parsed (markdown-it-py) into blocks of styled runs.

Invariants: every ``Run`` carries the full stack of styles that applies to it, outermost first, so any
run can be rendered on its own (which is what lets a chunker close and reopen entities anywhere);
preformatted blocks (code fences, tables) carry a ``pre`` style outermost and are never re-flowed.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

StyleKind = Literal["bold", "italic", "strike", "code", "link", "pre", "quote"]


@dataclass(frozen=True)
class Style:
    """One formatting entity; ``value`` is a link's href or a code block's language."""

    kind: StyleKind
    value: str = ""


@dataclass(frozen=True)
class Run:
    """Text with the styles that apply to it, outermost first."""

    text: str
    styles: tuple[Style, ...] = ()


@dataclass(frozen=True)
class Block:
    """A paragraph, heading, list item, rule, code block or table; ``separator`` goes before it."""

    runs: tuple[Run, ...]
    separator: str = "\n\n"

    @property
    def is_preformatted(self) -> bool:
        return bool(self.runs) and bool(self.runs[0].styles) and self.runs[0].styles[0].kind == "pre"


_INLINE_STYLES: dict[str, Style] = {
    "strong": Style("bold"),
    "em": Style("italic"),
    "s": Style("strike"),
}
BULLET = "•"
RULE = "———"


def _parser() -> MarkdownIt:
    # html off: any HTML the model writes is shown literally, never interpreted by a platform.
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def parse_markdown(markdown: str) -> list[Block]:
    """Markdown text to blocks; pure and deterministic."""
    return _BlockBuilder().build(_parser().parse(markdown))


def inline_runs(token: Token, outer: tuple[Style, ...] = ()) -> list[Run]:
    """The runs of one ``inline`` token, adjacent runs with equal styles merged."""
    stack = list(outer)
    runs: list[Run] = []

    def emit(text: str, styles: tuple[Style, ...]) -> None:
        if not text:
            return
        if runs and runs[-1].styles == styles:
            runs[-1] = Run(runs[-1].text + text, styles)
        else:
            runs.append(Run(text, styles))

    for child in token.children or []:
        kind = child.type
        if kind in ("text", "html_inline"):
            emit(child.content, tuple(stack))
        elif kind == "code_inline":
            emit(child.content, (*stack, Style("code")))
        elif kind in ("softbreak", "hardbreak"):
            emit("\n", tuple(stack))
        elif kind == "link_open":
            stack.append(Style("link", str(child.attrs.get("href", ""))))
        elif kind == "image":
            emit(child.content or "image", (*stack, Style("link", str(child.attrs.get("src", "")))))
        elif kind.endswith("_open") and kind[:-5] in _INLINE_STYLES:
            stack.append(_INLINE_STYLES[kind[:-5]])
        elif kind.endswith("_close") and stack:
            stack.pop()
    return runs


def plain_text(token: Token) -> str:
    return "".join(run.text for run in inline_runs(token))


def display_width(text: str) -> int:
    """Columns a monospace font gives ``text`` (wide CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def format_table(rows: list[list[str]]) -> str:
    """Rows of cells as aligned monospace text, with a rule under the header row."""
    columns = max((len(row) for row in rows), default=0)
    cells = [[(row[i] if i < len(row) else "").replace("\n", " ") for i in range(columns)] for row in rows]
    widths = [max(display_width(row[i]) for row in cells) for i in range(columns)]

    def line(row: list[str]) -> str:
        padded = (cell + " " * (widths[i] - display_width(cell)) for i, cell in enumerate(row))
        return " | ".join(padded).rstrip()

    out = [line(row) for row in cells]
    if len(out) > 1:
        out.insert(1, "-+-".join("-" * width for width in widths))
    return "\n".join(out)


@dataclass
class _ListLevel:
    ordered: bool
    item_marker: str = ""
    marker_pending: bool = False


@dataclass
class _BlockBuilder:
    """Walks markdown-it's block tokens, keeping list and quote context."""

    blocks: list[Block] = field(default_factory=list)
    lists: list[_ListLevel] = field(default_factory=list)
    quote_depth: int = 0
    heading: bool = False
    list_blocks: int = 0
    in_table: bool = False
    table_rows: list[list[str]] = field(default_factory=list)

    def build(self, tokens: list[Token]) -> list[Block]:
        for token in tokens:
            self._visit(token)
        return self.blocks

    def _outer(self) -> tuple[Style, ...]:
        outer: tuple[Style, ...] = (Style("quote"),) if self.quote_depth else ()
        return (*outer, Style("bold")) if self.heading else outer

    def _add(self, runs: list[Run]) -> None:
        if not runs:
            return
        in_list = bool(self.lists)
        separator = "\n" if in_list and self.list_blocks > 0 else "\n\n"
        if in_list:
            self.list_blocks += 1
            level = self.lists[-1]
            indent = "  " * (len(self.lists) - 1)
            marker = level.item_marker if level.marker_pending else " " * len(level.item_marker)
            level.marker_pending = False
            styles = runs[0].styles if runs[0].styles[:1] == (Style("quote"),) else ()
            runs = [Run(indent + marker, styles[:1]), *runs]
        self.blocks.append(Block(tuple(runs), separator))

    def _visit(self, token: Token) -> None:
        kind = token.type
        if kind == "inline":
            if self.in_table:
                self.table_rows[-1].append(plain_text(token))
            else:
                self._add(inline_runs(token, self._outer()))
        elif kind in ("heading_open", "heading_close"):
            self.heading = kind == "heading_open"
        elif kind in ("bullet_list_open", "ordered_list_open"):
            if not self.lists:
                self.list_blocks = 0
            self.lists.append(_ListLevel(ordered=kind == "ordered_list_open"))
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
        elif kind == "list_item_open":
            level = self.lists[-1]
            level.item_marker = f"{token.info}{token.markup} " if level.ordered else f"{BULLET} "
            level.marker_pending = True
        elif kind in ("blockquote_open", "blockquote_close"):
            self.quote_depth += 1 if kind == "blockquote_open" else -1
        elif kind in ("fence", "code_block"):
            language = token.info.split()[0] if token.info.strip() else ""
            self._add_pre(token.content.rstrip("\n"), language)
        elif kind == "hr":
            self._add([Run(RULE, self._outer())])
        elif kind == "html_block":
            self._add([Run(token.content.rstrip("\n"), self._outer())])
        elif kind == "table_open":
            self.in_table, self.table_rows = True, []
        elif kind == "tr_open":
            self.table_rows.append([])
        elif kind == "table_close":
            rows, self.in_table, self.table_rows = self.table_rows, False, []
            self._add_pre(format_table(rows), "")

    def _add_pre(self, text: str, language: str) -> None:
        separator = "\n" if self.lists and self.list_blocks > 0 else "\n\n"
        if self.lists:
            self.list_blocks += 1
            self.lists[-1].marker_pending = False
        self.blocks.append(Block((Run(text or " ", (Style("pre", language),)),), separator))
