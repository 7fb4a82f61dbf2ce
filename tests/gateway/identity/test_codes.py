"""One-time codes: unambiguous characters only, and whatever a person types maps back to the code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.identity import ALPHABET, new_code, normalise_code


def test_the_alphabet_has_no_look_alike_characters() -> None:
    assert not set("01OIL") & set(ALPHABET)


@given(length=st.integers(min_value=6, max_value=8))
def test_a_code_survives_lower_case_spaces_and_dashes(length: int) -> None:
    code = new_code(length)
    assert len(code) == length and set(code) <= set(ALPHABET)
    typed = " " + "-".join([code[:4].lower(), code[4:]]) + " "
    assert normalise_code(typed) == code


@pytest.mark.parametrize("typed", ["", "ABC", "ABCDEFGHJ", "ABCD0OOO", "ABCD 11!", "ÄBCDEFGH"])
def test_things_that_cannot_be_codes_are_rejected(typed: str) -> None:
    assert normalise_code(typed) is None


def test_code_length_outside_6_to_8_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        new_code(5)
