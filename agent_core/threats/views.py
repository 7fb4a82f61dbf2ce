"""The matching views of a text: the forms of it the threat patterns are run against.

Invariants: views are for matching only — nothing here changes what is stored or shown; every view
has suspect (default-ignorable) code points removed and is NFKC-normalised and case-folded; the
skeleton view also drops combining marks, maps look-alike letters of other scripts to the ASCII letter
they imitate (Unicode's confusables data, via ``confusable_homoglyphs``, plus the Latin small capitals)
BEFORE case-folding, so a capital is read as the capital it imitates (Greek 'Ν' as 'N', not as its
lower case 'ν', which imitates 'v'), removes Markdown emphasis marks and re-joins spaced-out letters;
the split view reads hyphen/underscore/dot-joined words as words; the compact views keep only ASCII
letters and digits (also with leetspeak digits read as letters) and one '.' for each sentence break, so
key phrases match however they are split but never across sentences.
Building the views is linear in the text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from confusable_homoglyphs.confusables import confusables_data  # type: ignore[import-untyped]

from agent_core.threats.invisible import suspects_removed

# Emphasis marks; backticks stay, so code spans are still told apart (compact views drop them too).
_EMPHASIS = re.compile(r"[*~]+")
# Three or more single letters/digits each followed by one separator: "i g n o r e", "i.g.n.o.r.e".
_SPACED_OUT = re.compile(r"\b(?:[^\W_][ ._\-·•|/\\]){2,}[^\W_]\b")
_SEPARATORS = re.compile(r"[ ._\-·•|/\\]")
_BLANKS = re.compile(r"[^\S\n]{2,}|[^\S\n ]")
_WORD_JOINERS = re.compile(r"(?<=[^\W_])[-_]+(?=[^\W_])|(?<=[^\W\d_])\.(?=[^\W\d_])")
_SENTENCE_BREAKS = re.compile(r"[^a-z0-9.!?;\n]+")
_BREAK_RUNS = re.compile(r"[.!?;\n]+")
_LEET = str.maketrans("013457", "oieast")


@dataclass(frozen=True)
class MatchViews:
    """The forms of one text that patterns match: ``plain`` keeps case (for encoded payloads)."""

    plain: str
    texts: tuple[str, ...]
    compacts: tuple[str, ...]


def match_views(text: str) -> MatchViews:
    """Every distinct matching view of ``text``."""
    plain = unicodedata.normalize("NFKC", suspects_removed(text))
    folded = plain.casefold()
    skeleton = _skeleton(plain, folded)
    split = _WORD_JOINERS.sub(" ", skeleton) if any(c in skeleton for c in "-_.") else skeleton
    compact = _BREAK_RUNS.sub(".", _SENTENCE_BREAKS.sub("", skeleton))
    return MatchViews(plain, _distinct(folded, skeleton, split), _distinct(compact, compact.translate(_LEET)))


def _skeleton(plain: str, folded: str) -> str:
    if not folded.isascii():
        stripped = "".join(c for c in unicodedata.normalize("NFD", plain) if not unicodedata.combining(c))
        folded = unicodedata.normalize("NFC", stripped).translate(_confusable_table()).casefold()
    text = _EMPHASIS.sub("", folded)
    text = _SPACED_OUT.sub(lambda m: _SEPARATORS.sub("", m.group()), text)
    return _BLANKS.sub(" ", text)


def _distinct(*views: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(views))


@cache
def _confusable_table() -> dict[int, str]:
    """Non-ASCII letters that imitate one ASCII letter or digit -> that character, lower-cased.

    A letter is read in its own case first, then in the other cases, so the Greek capital 'Ν' reads as
    'n' (its own prototype 'N'), while the Cyrillic small 'т' (whose prototype is the small capital 'ᴛ')
    still reads as 't' through its capital 'Т'. A capital whose prototype is 'l' imitates 'I' (the
    Ukrainian 'І', the Greek 'Ι'). The Latin small capitals ('ɴ', 'ʀ', …), mostly absent from the
    confusables data or mapped to other non-ASCII letters, read as the letter their name gives.
    """
    table: dict[int, str] = {}
    for char in confusables_data:
        if len(char) != 1 or char.isascii():
            continue
        for candidate in (char, char.upper(), char.lower()):
            target = _ascii_prototype(candidate)
            if target is not None:
                table[ord(char)] = "i" if target == "l" and char.isupper() else target.lower()
                break
    table.update(_small_capitals())
    return table


def _small_capitals() -> dict[int, str]:
    """``LATIN LETTER SMALL CAPITAL X`` -> 'x', from the Unicode character names."""
    table = {}
    for code in (*range(0x0250, 0x02B0), *range(0x1D00, 0x1D80), *range(0xA720, 0xA800)):
        name = unicodedata.name(chr(code), "")
        letter = name.removeprefix("LATIN LETTER SMALL CAPITAL ")
        if letter != name and len(letter) == 1:
            table[code] = letter.lower()
    return table


def _ascii_prototype(char: str) -> str | None:
    if len(char) != 1:
        return None
    if char.isascii():
        return char if char.isalnum() else None
    entries = confusables_data.get(char)
    if not isinstance(entries, list) or len(entries) != 1:
        return None
    target = entries[0].get("c")
    if isinstance(target, str) and len(target) == 1 and target.isascii() and target.isalnum():
        return target
    return None
