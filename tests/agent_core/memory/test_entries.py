"""Entry format: round trip, delimiter rejection, canonical-form detection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_core.memory import (
    DELIMITER,
    DelimiterInEntryError,
    parse_entries,
    serialise_entries,
    validate_entry,
)
from agent_core.memory.entries import canonical_problem, salvage_entries

entry_text = (
    st.text(alphabet=st.sampled_from(["a", "Z", " ", "\n", "§", "é", "日", "\t", "-", "\r"]), min_size=1)
    .map(str.strip)
    .filter(lambda e: bool(e) and "§" not in e.split("\n"))
)


@given(st.lists(entry_text, max_size=12))
def test_format_round_trips_for_any_valid_entry_list(entries: list[str]) -> None:
    raw = serialise_entries(entries)
    assert parse_entries(raw) == tuple(entries)
    assert canonical_problem(raw) is None


@given(st.lists(entry_text, min_size=1, max_size=5), st.integers(min_value=0, max_value=4))
def test_entry_containing_the_delimiter_line_is_rejected(entries: list[str], where: int) -> None:
    poisoned = "\n".join([*entries[:where], "§", *entries[where:]])
    with pytest.raises(DelimiterInEntryError, match="only '§'"):
        validate_entry(poisoned)


def test_section_sign_inside_a_line_is_fine() -> None:
    assert validate_entry("  Law §12 applies\n§ 3 too  ") == "Law §12 applies\n§ 3 too"


def test_empty_store_is_empty_text() -> None:
    assert serialise_entries([]) == ""
    assert parse_entries("") == ()
    assert DELIMITER == "\n§\n"


@pytest.mark.parametrize(
    "raw",
    [
        "likes tea\n",  # editor added a trailing newline
        "likes tea\nlikes coffee\n",  # `echo likes coffee >> MEMORY.md` after a newline-terminated file
        "likes teaand coffee\n",  # `echo "and coffee" >> MEMORY.md` glued to the last entry
        "a\n§\n\n§\nb",  # empty entry
        " a\n§\nb",  # unstripped entry
        "§\na",  # bare delimiter line at the start
    ],
)
def test_hand_edits_are_not_canonical(raw: str) -> None:
    assert canonical_problem(raw) is not None


def test_salvage_splits_on_loose_delimiter_lines() -> None:
    assert salvage_entries("a\n § \nb\n§\n\n§\nc\n") == ("a", "b", "c")
