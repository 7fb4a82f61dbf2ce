"""Markdown parsing and limit-aware chunking shared by every platform's renderer."""

from adapters.render.chunking import Dialect, Measure, chunk_blocks
from adapters.render.document import Block, Run, Style, StyleKind, format_table, parse_markdown

__all__ = [
    "Block",
    "Dialect",
    "Measure",
    "Run",
    "Style",
    "StyleKind",
    "chunk_blocks",
    "format_table",
    "parse_markdown",
]
