"""The on-disk entry format: entries joined by "\\n§\\n", each stripped, non-empty, delimiter-free.

Invariant: for every tuple ``e`` accepted by ``validate_entry``, ``parse_entries(serialise_entries(e)) == e``;
a raw text is canonical exactly when re-serialising its parsed entries reproduces it byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_core.memory.errors import DelimiterInEntryError

DELIMITER = "\n§\n"
DELIMITER_LINE = "§"


def has_delimiter_line(text: str) -> bool:
    """True when some line of ``text`` is exactly the delimiter line."""
    return any(line == DELIMITER_LINE for line in text.split("\n"))


def validate_entry(text: str) -> str:
    """The stripped entry; raises DelimiterInEntryError if it would split into several on reload."""
    entry = text.strip()
    if has_delimiter_line(entry):
        raise DelimiterInEntryError(
            "Content contains a line that is only '§', which is the entry delimiter; "
            "rephrase it without that line."
        )
    return entry


def parse_entries(raw: str) -> tuple[str, ...]:
    """The entries of a file's text: split on the full delimiter, strip each, drop empties."""
    return tuple(piece.strip() for piece in raw.split(DELIMITER) if piece.strip())


def serialise_entries(entries: Iterable[str]) -> str:
    """The canonical file text for ``entries`` (empty store = empty text)."""
    return DELIMITER.join(entries)


def canonical_problem(raw: str) -> str | None:
    """Why ``raw`` is not the canonical serialisation of its own entries, or None when it is."""
    entries = parse_entries(raw)
    if serialise_entries(entries) != raw:
        return "does not round-trip (it was edited outside the memory tool)"
    if any(has_delimiter_line(e) for e in entries):
        return "has an entry containing a bare '§' line"
    return None


def usage_chars(entries: Iterable[str]) -> int:
    """Characters the entries occupy in the file (the unit of every limit)."""
    return len(serialise_entries(entries))


def salvage_entries(text: str) -> tuple[str, ...]:
    """Best-effort entries of a damaged text: every line that is only '§' (give or take spaces) splits."""
    entries: list[str] = []
    current: list[str] = []
    for line in [*text.split("\n"), DELIMITER_LINE]:
        if line.strip() == DELIMITER_LINE:
            entries.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    return tuple(e for e in entries if e)
