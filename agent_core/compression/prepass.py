"""The cheap pre-pass over older tool outputs: long ones become a one-line note, repeats a back-reference.

Invariants: no model is called; only tool-result rows change, and only those outside the protected set
(the active exchange keeps its outputs verbatim because the model is working with them now); a collapsed
duplicate always points back to a verbatim copy that is still visible EARLIER in the same sequence, so
``collapse_duplicates`` runs on the final kept sequence (after pair repair), never on rows that are about to
be summarised away, and only verbatim rows count as originals. A back-reference carried over from an earlier
compression cannot be checked (its row no longer holds the output it repeated), so a later compression
retires it to a note that claims no visible copy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence

from .rows import Row

DUPLICATE_OUTPUT = "[same output as an earlier call]"
RETIRED_DUPLICATE = (
    "[output omitted: it repeated an earlier call's output, which may since have been summarised]"
)
_FIRST_LINE_CHARS = 120


def long_output_note(row: Row) -> str:
    """The one line that replaces a long tool output."""
    text = row.text
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) > _FIRST_LINE_CHARS:
        first = first[:_FIRST_LINE_CHARS] + "…"
    name = row.record.tool_name or "tool"
    return f"[tool {name} output, {len(text)} chars, omitted: first line: {first} …]"


def shorten_long_outputs(rows: Sequence[Row], *, protected: Collection[int], limit: int) -> list[Row]:
    """Replace tool outputs longer than ``limit`` chars (outside ``protected`` record ids) with a note."""
    out: list[Row] = []
    for row in rows:
        if row.role == "tool" and row.record.id not in protected and len(row.text) > limit:
            row = row.with_content(long_output_note(row))
        out.append(row)
    return out


def retire_carried_duplicates(rows: Sequence[Row], *, protected: Collection[int]) -> list[Row]:
    """Replace back-references an earlier compression stored (outside ``protected``) with a neutral note."""
    return [
        row.with_content(RETIRED_DUPLICATE)
        if _is_carried_marker(row) and row.record.id not in protected
        else row
        for row in rows
    ]


def collapse_duplicates(rows: Sequence[Row], *, protected: Collection[int], min_chars: int) -> list[Row]:
    """Replace a tool output identical to an earlier verbatim one in ``rows`` with a back-reference."""
    seen: set[str] = set()
    out: list[Row] = []
    for row in rows:
        # A shortened note or a stored marker is not the output itself: neither an original nor a repeat.
        if (
            row.role == "tool"
            and not row.changed
            and not _is_carried_marker(row)
            and len(row.text) >= min_chars
        ):
            digest = hashlib.sha256(row.text.encode("utf-8", "replace")).hexdigest()
            if digest in seen and row.record.id not in protected:
                row = row.with_content(DUPLICATE_OUTPUT)
            seen.add(digest)
        out.append(row)
    return out


def _is_carried_marker(row: Row) -> bool:
    return row.role == "tool" and row.text == DUPLICATE_OUTPUT
