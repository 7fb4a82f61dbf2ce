"""Snippets: a short window of a message's text around the words a query matched, labelled when untrusted.

Invariants: pure functions; a snippet is at most ``width`` characters plus the ellipses that mark cut
ends; whitespace is collapsed so a snippet is one line; text of a tool message always starts with the
untrusted-output label, whatever the message says.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from agent_core.search.results import UNTRUSTED_LABEL
from agent_core.search.scripts import script_runs
from agent_core.storage.search_index import PlannedQuery

ELLIPSIS = "…"
_MAX_MATCHES = 64
_MAX_GRAMS = 16
_SNAP_CHARS = 12
_WORD = re.compile(r"\w+")


def highlight_terms(query: PlannedQuery) -> tuple[str, ...]:
    """What to look for in a hit's text: the query's words and phrases, CJK sub-words, rough word stems.

    The index matched stems and substrings, so the exact query word may be absent
    from the text; shorter forms let the snippet still centre on the match.
    """
    found: dict[str, None] = {}
    for text in (*query.phrases, *query.terms):
        found[text] = None
        for run, unsegmented in script_runs(text):
            if unsegmented:
                found[run] = None
                for start in range(min(len(run) - 1, _MAX_GRAMS)):
                    found[run[start : start + 2]] = None
                continue
            for word in _WORD.findall(run):
                found[word] = None
                if len(word) >= 6:
                    found[word[: max(4, len(word) - 4)]] = None
    return tuple(sorted((term for term in found if term.strip()), key=len, reverse=True))


def make_snippet(text: str, terms: Iterable[str], width: int) -> str:
    """About ``width`` characters of ``text`` covering as many distinct ``terms`` as possible."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    pattern = _pattern(terms)
    start = 0 if pattern is None else _best_start(flat, pattern, width)
    end = min(len(flat), start + width)
    if end == len(flat):
        start = max(0, end - width)
    start, end = _snap(flat, start, end)
    return (ELLIPSIS if start > 0 else "") + flat[start:end].strip() + (ELLIPSIS if end < len(flat) else "")


def labelled(snippet: str, role: str, tool_name: str | None) -> tuple[str, bool]:
    """The snippet text as shown, and whether it is untrusted (historical tool output)."""
    if role != "tool":
        return snippet, False
    label = UNTRUSTED_LABEL if not tool_name else f"{UNTRUSTED_LABEL[:-1]} from {tool_name}]"
    return f"{label} {snippet}", True


def _pattern(terms: Iterable[str]) -> re.Pattern[str] | None:
    unique = sorted({t for t in terms if t}, key=len, reverse=True)
    if not unique:
        return None
    return re.compile("|".join(re.escape(term) for term in unique), re.IGNORECASE)


def _best_start(flat: str, pattern: re.Pattern[str], width: int) -> int:
    found = itertools.islice(pattern.finditer(flat), _MAX_MATCHES)
    matches = [(m.start(), m.end(), m.group(0).casefold()) for m in found]
    if not matches:
        return 0
    lead = width // 4
    best_start, best_cover = 0, -1
    for position, _, _ in matches:
        start = max(0, position - lead)
        cover = len({term for s, e, term in matches if s >= start and e <= start + width})
        if cover > best_cover:
            best_start, best_cover = start, cover
    return best_start


def _snap(flat: str, start: int, end: int) -> tuple[int, int]:
    """Move the cut points to nearby spaces so words are not split (CJK text has none; it stays)."""
    if start > 0:
        space = flat.find(" ", start, start + _SNAP_CHARS)
        if space != -1:
            start = space + 1
    if end < len(flat):
        space = flat.rfind(" ", end - _SNAP_CHARS, end)
        if space > start:
            end = space
    return start, end
