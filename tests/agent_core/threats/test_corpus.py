"""The attack and harmless corpora: every attack refused, every harmless text passed, figures printed.

Precision and recall are computed over both corpora (each case judged at its own scope) and printed
in the terminal summary of every run that includes this file, with or without ``-s``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from agent_core.threats import scan
from tests.agent_core.threats.conftest import SUMMARY_KEY
from tests.agent_core.threats.corpus_cases import ATTACKS, HARMLESS, Case

MIN_CASES = 60
MAX_KNOWN_MISSES = 3


def params(cases: tuple[Case, ...]) -> list[object]:
    """Each case as a test parameter; a documented known miss is an expected (strict) failure."""
    return [
        pytest.param(c, id=c.label, marks=pytest.mark.xfail(strict=True, reason=c.known_miss))
        if c.known_miss
        else pytest.param(c, id=c.label)
        for c in cases
    ]


def ids(case: Case) -> list[str]:
    return [f.pattern_id for f in scan(case.text, case.scope)]


@pytest.mark.parametrize("case", params(ATTACKS))
def test_every_attack_is_refused_for_its_reason(case: Case) -> None:
    found = ids(case)
    assert found, f"not refused: {case.text!r}"
    assert case.expect in found, (case.text, found)


@pytest.mark.parametrize("case", params(HARMLESS))
def test_every_harmless_text_passes(case: Case) -> None:
    assert ids(case) == [], case.text


def test_both_corpora_are_large_and_varied() -> None:
    assert len(ATTACKS) >= MIN_CASES and len(HARMLESS) >= MIN_CASES
    assert all(case.expect for case in ATTACKS)
    assert sum(1 for c in ATTACKS + HARMLESS if c.known_miss) <= MAX_KNOWN_MISSES
    assert set(Counter(c.klass for c in ATTACKS)) >= {
        "invisible", "homoglyph", "split", "synonym", "encoded", "image_exfil", "fake_tag", "jailbreak",
        "multilingual", "classic",
    }  # fmt: skip
    assert set(Counter(c.klass for c in HARMLESS)) >= {"issue", "multilingual", "emoji", "code", "preference"}


def test_precision_and_recall_over_both_corpora(record_property: Callable[[str, object], None]) -> None:
    true_pos = sum(1 for c in ATTACKS if ids(c))
    false_neg = len(ATTACKS) - true_pos
    false_pos = sum(1 for c in HARMLESS if ids(c))
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / len(ATTACKS)
    line = (
        f"threat scanner: precision {precision:.3f}, recall {recall:.3f} "
        f"({len(ATTACKS)} attacks: {true_pos} refused, {false_neg} missed; "
        f"{len(HARMLESS)} harmless: {false_pos} refused)"
    )
    record_property(SUMMARY_KEY, line)
    assert false_neg <= sum(1 for c in ATTACKS if c.known_miss), line
    assert false_pos <= sum(1 for c in HARMLESS if c.known_miss), line
