"""Character classes the query builder needs: unsegmented scripts, token characters, CJK particles.

Invariant: every predicate here is pure and total over `str` of length one (any code point,
including lone surrogates), so the builder can classify arbitrary user text without raising.
"""

from __future__ import annotations

import bisect
import unicodedata
from typing import Final

# Scripts written without spaces between words (plus Hangul, whose space-separated words carry
# attached particles). unicode61 turns a whole run of them into ONE token, so a word inside a run
# is only reachable through the trigram index. Sorted, non-overlapping, inclusive ranges.
_UNSEGMENTED_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31A0, 0x31BF),  # Bopomofo extended
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFFDC),  # half-width Katakana and Hangul
    (0x20000, 0x3134F),  # CJK extensions B-G, compatibility supplement
)
_RANGE_STARTS: Final[tuple[int, ...]] = tuple(start for start, _ in _UNSEGMENTED_RANGES)

# Grammatical particles of Chinese/Japanese that are rarely part of a word: as a one-character term
# they would match nearly every message, and a bigram containing one is noise, so both are dropped.
CJK_PARTICLES: Final[frozenset[str]] = frozenset("的了吗呢吧啊呀嘛のをがはにでへ")


def is_unsegmented(char: str) -> bool:
    """True when `char` belongs to a script that unicode61 cannot split into words."""
    code = ord(char)
    slot = bisect.bisect_right(_RANGE_STARTS, code) - 1
    return slot >= 0 and code <= _UNSEGMENTED_RANGES[slot][1]


def is_token_char(char: str) -> bool:
    """True for characters unicode61 keeps inside tokens (letters, numbers, marks, private use)."""
    category = unicodedata.category(char)
    return category[0] in "LNM" or category == "Co"


def has_unsegmented(text: str) -> bool:
    return any(is_unsegmented(char) for char in text)


def has_token_char(text: str) -> bool:
    return any(is_token_char(char) for char in text)


def script_runs(text: str) -> list[tuple[str, bool]]:
    """Split `text` into maximal runs of (un)segmented characters: [(run, is_unsegmented), ...]."""
    flags = [is_unsegmented(char) for char in text]
    runs: list[tuple[str, bool]] = []
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or flags[index] != flags[start]:
            runs.append((text[start:index], flags[start]))
            start = index
    return runs
