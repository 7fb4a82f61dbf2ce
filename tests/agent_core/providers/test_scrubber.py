"""The streaming scrubber: an echoed ``<memory-context>`` block never survives, however it is chunked."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from agent_core.agent import fence_recall
from agent_core.providers import RecallScrubber, scrub_recall

SECRET = "Bob's PIN hint is 'blue heron'"
ECHO = f"Sure thing.\n\n{fence_recall(SECRET)}\n\nAnything else?"


def stream(text: str, cuts: list[int]) -> str:
    scrubber = RecallScrubber()
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    out = [scrubber.feed(text[a:b]) for a, b in itertools.pairwise(bounds)]
    return "".join(out) + scrubber.flush()


def test_a_whole_echoed_fence_is_removed_and_the_rest_kept() -> None:
    visible = scrub_recall(ECHO)
    assert SECRET not in visible and "memory-context" not in visible and "System note" not in visible
    assert visible.startswith("Sure thing.") and visible.rstrip().endswith("Anything else?")


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_any_chunking_gives_the_same_safe_text(cuts: list[int]) -> None:
    assert stream(ECHO, cuts) == scrub_recall(ECHO)


def test_character_by_character_stream_never_shows_the_fence() -> None:
    scrubber = RecallScrubber()
    shown = [scrubber.feed(ch) for ch in ECHO]
    shown.append(scrubber.flush())
    assert SECRET not in "".join(shown)
    assert all("<" not in piece for piece in shown), "a partial tag leaked before it was decided"


def test_tags_are_matched_case_insensitively_with_inner_spaces() -> None:
    assert scrub_recall("a < Memory-Context >hidden</ MEMORY-context > b") == "a  b"


def test_an_unterminated_block_is_dropped_at_the_end() -> None:
    assert scrub_recall("visible <memory-context>\nsecret facts") == "visible "


def test_ordinary_angle_brackets_and_brackets_pass_through() -> None:
    text = "if a < b and c > d then [x] <memo> <b>bold</b> [System] ok"
    assert stream(text, [3, 7, 11, 19, 25, 40]) == text
