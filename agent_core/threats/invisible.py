"""Invisible code points: which ones are refused in context, and the text with all of them removed.

Invariants: the suspect set is Unicode's Default_Ignorable_Code_Point property plus the interlinear
annotation controls (U+FFF9..U+FFFB), which hide text just as well; a suspect code point passes only
where it carries meaning — ZWJ inside an emoji sequence, ZWJ/ZWNJ between letters of a script that
needs them (Arabic, Persian, Indic, Sinhala, Myanmar, Khmer, Mongolian), VS15/VS16 after an emoji or
keycap base, Mongolian selectors between Mongolian letters, ideographic variation selectors after a
CJK ideograph, tag characters inside an emoji flag tag sequence, a byte-order mark at the start of the
text or of a line (a pasted file), a soft hyphen between two letters (a hyphenation point) and
LRM/RLM/ALM next to right-to-left text or a digit; everything else (U+2061, U+180E in Latin text, a soft
hyphen at a word's edge, LRM/RLM between Latin letters, bidi overrides and isolates, a BOM inside a line,
stray selectors and tags, …) is a finding. What passes here is still removed from the matching views,
so an injection written with it is caught by the patterns.
Each offending code point is reported once, in order of first appearance. Work is linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ZWNJ, ZWJ, VS15, VS16 = "\u200c", "\u200d", "\ufe0e", "\ufe0f"
KEYCAP = "\u20e3"
SOFT_HYPHEN, BOM = "\u00ad", "\ufeff"
_DIRECTION_MARKS = frozenset("\u200e\u200f\u061c")  # LRM, RLM, ALM

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt) + U+FFF9..FFFB, as a regex class.
_SUSPECT_CLASS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
_SUSPECT = re.compile(f"[{_SUSPECT_CLASS}]")
# An emoji flag tag sequence: black flag, 1-8 tag letters/digits, CANCEL TAG (e.g. the flag of Scotland).
_TAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,8}\U000e007f")

# Scripts whose orthography uses ZWJ/ZWNJ between letters (block ranges, inclusive).
_JOINING_SCRIPTS = (
    (0x0600, 0x06FF),  # Arabic, Persian, Urdu
    (0x0700, 0x074F),  # Syriac
    (0x0750, 0x077F),  # Arabic Supplement
    (0x07C0, 0x07FF),  # N'Ko
    (0x0870, 0x08FF),  # Arabic Extended-B/A
    (0x0900, 0x0DFF),  # Devanagari … Sinhala
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x1800, 0x18AF),  # Mongolian
    (0xA8E0, 0xA8FF),  # Devanagari Extended
    (0xFB50, 0xFDFF),  # Arabic Presentation Forms-A
    (0xFE70, 0xFEFC),  # Arabic Presentation Forms-B
    (0x11000, 0x111FF),  # Brahmi, Kaithi, Sharada, …
)
# Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, …, and their presentation forms).
_RIGHT_TO_LEFT = (
    (0x0590, 0x08FF),
    (0xFB1D, 0xFDFF),
    (0xFE70, 0xFEFC),
    (0x10800, 0x10FFF),
    (0x1E800, 0x1EFFF),
)
_RIGHT_TO_LEFT_LETTER = re.compile(
    "(?=[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in _RIGHT_TO_LEFT) + "])[^\\W\\d_]"
)
_DIRECTION_REACH = 40  # characters either side of a direction mark searched for right-to-left text
_MONGOLIAN = (0x1800, 0x18AF)
_CJK_IDEOGRAPHS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
_PICTOGRAPHIC = ((0x1F000, 0x1FAFF), (0x2190, 0x2BFF), (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3299))
_PICTOGRAPHIC_SINGLES = frozenset("\u00a9\u00ae\u203c\u2049\u2122\u2139")
_KEYCAP_BASES = frozenset("0123456789#*")


def suspects_removed(text: str) -> str:
    """``text`` without any suspect code point (the form patterns are matched against)."""
    return _SUSPECT.sub("", text) if _SUSPECT.search(text) else text


def offending_code_points(text: str) -> tuple[str, ...]:
    """Every suspect code point of ``text`` used where it carries no meaning, once each, by first position."""
    first = _SUSPECT.search(text)
    if first is None:
        return ()
    allowed_tags = _tag_sequence_positions(text) if re.search("[\U000e0000-\U000e0fff]", text) else set()
    seen: dict[str, None] = {}
    for match in _SUSPECT.finditer(text, first.start()):
        pos, char = match.start(), match.group()
        if char in seen or pos in allowed_tags or _meaningful(text, pos, char):
            continue
        seen[char] = None
    return tuple(seen)


def _tag_sequence_positions(text: str) -> set[int]:
    return {pos for m in _TAG_SEQUENCE.finditer(text) for pos in range(m.start() + 1, m.end())}


def _meaningful(text: str, pos: int, char: str) -> bool:
    before = _previous_base(text, pos)
    after = text[pos + 1] if pos + 1 < len(text) else ""
    if char == ZWJ and _is_pictographic(before) and _is_pictographic(after):
        return True
    if char in (ZWJ, ZWNJ):
        # Between letters of a joining script, or closing a word there (Malayalam chillu: "ന്‍").
        return _in(before, _JOINING_SCRIPTS) and (_in(after, _JOINING_SCRIPTS) or not after.isalpha())
    if char in (VS15, VS16):
        prev = text[pos - 1] if pos else ""
        return _is_pictographic(prev) or (prev in _KEYCAP_BASES and after == KEYCAP)
    if "\u180b" <= char <= "\u180f":
        return _in(text[pos - 1] if pos else "", (_MONGOLIAN,)) and _in(after, (_MONGOLIAN,))
    if "\U000e0100" <= char <= "\U000e01ef":
        return _in(text[pos - 1] if pos else "", _CJK_IDEOGRAPHS)
    return _marks_text(text, pos, char, after)


def _marks_text(text: str, pos: int, char: str, after: str) -> bool:
    """Marks pasted text carries: a byte-order mark opening a file, hyphenation points, direction marks."""
    prev = text[pos - 1] if pos else ""
    if char == BOM:
        return prev in ("", "\n", "\r")
    if char == SOFT_HYPHEN:
        return prev.isalpha() and after.isalpha()
    if char in _DIRECTION_MARKS:
        if any(c.isdigit() or (c.isalpha() and _in(c, _RIGHT_TO_LEFT)) for c in (prev, after)):
            return True
        # At a word's edge near right-to-left text (LRM around a Latin word in Arabic), never inside a word.
        reach = _DIRECTION_REACH
        near = _RIGHT_TO_LEFT_LETTER.search(text, max(0, pos - reach), pos) or _RIGHT_TO_LEFT_LETTER.search(
            text, pos + 1, pos + 1 + reach
        )
        return not (prev.isalpha() and after.isalpha()) and near is not None
    return False


def _previous_base(text: str, pos: int) -> str:
    """The character before ``pos``, looking through one emoji presentation selector (as in 🏳️‍🌈)."""
    if pos >= 2 and text[pos - 1] == VS16:
        return text[pos - 2]
    return text[pos - 1] if pos else ""


def _is_pictographic(char: str) -> bool:
    return bool(char) and (char in _PICTOGRAPHIC_SINGLES or _in(char, _PICTOGRAPHIC))


def _in(char: str, ranges: Iterable[tuple[int, int]]) -> bool:
    if not char:
        return False
    code = ord(char)
    return any(low <= code <= high for low, high in ranges)
