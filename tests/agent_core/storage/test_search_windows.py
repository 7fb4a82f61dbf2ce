"""Which windows of adjacent turns a segment gets: the one rule both backends carry out."""

from __future__ import annotations

import numpy as np

from agent_core.storage.search_windows import (
    StoredTail,
    Turn,
    decode_vectors,
    encode_vector,
    name_words,
    plan_windows,
    speaker_label,
    window_text,
    windowable,
)
from agent_core.storage.vector_matrix import VectorMatrix, VectorRow


def turns(*ids: int) -> list[Turn]:
    return [Turn(i, "Priya" if i % 2 else "Tom", f"turn {i}") for i in ids]


def ids(plan_windows_result: object) -> list[tuple[int, ...]]:
    return [w.message_ids for w in plan_windows_result.windows]  # type: ignore[attr-defined]


def test_windows_of_three_turns_overlap_by_one_so_every_question_and_answer_sit_together() -> None:
    plan = plan_windows(None, turns(1, 2, 3, 4, 5, 6, 7), ended=False)
    assert ids(plan) == [(1, 2, 3), (3, 4, 5), (5, 6, 7)]
    assert [w.position for w in plan.windows] == [0, 1, 2]
    assert not plan.open_tail and plan.drop_window_id is None


def test_a_live_segment_leaves_its_last_turn_open_until_the_window_completes() -> None:
    plan = plan_windows(None, turns(1, 2, 3, 4), ended=False)
    assert ids(plan) == [(1, 2, 3)]
    assert plan.open_tail
    later = plan_windows(StoredTail(10, 0, (1, 2, 3)), turns(1, 2, 3, 4, 5), ended=False)
    assert ids(later) == [(3, 4, 5)] and [w.position for w in later.windows] == [1]
    assert not later.open_tail


def test_an_ended_segment_stores_its_short_last_window_and_a_reopened_one_replaces_it() -> None:
    ended = plan_windows(StoredTail(10, 0, (1, 2, 3)), turns(1, 2, 3, 4), ended=True)
    assert ids(ended) == [(3, 4)] and not ended.open_tail
    reopened = plan_windows(StoredTail(11, 1, (3, 4)), turns(3, 4, 5, 6), ended=False)
    assert reopened.drop_window_id == 11
    assert ids(reopened) == [(3, 4, 5)] and [w.position for w in reopened.windows] == [1]
    assert reopened.open_tail
    unchanged = plan_windows(StoredTail(11, 1, (3, 4)), turns(3, 4), ended=True)
    assert unchanged.drop_window_id is None and ids(unchanged) == []


def test_a_short_conversation_is_one_window_once_it_ended() -> None:
    assert ids(plan_windows(None, turns(1, 2), ended=False)) == []
    assert ids(plan_windows(None, turns(1, 2), ended=True)) == [(1, 2)]
    assert ids(plan_windows(None, [], ended=True)) == []


def test_only_spoken_turns_are_windowed_and_labelled_by_who_said_them() -> None:
    assert windowable("user", "hi") and windowable("assistant", "hello")
    assert not windowable("tool", "{}") and not windowable("assistant", "  ") and not windowable("user", None)
    assert speaker_label("assistant", None, "p1", "Ana") == "assistant"
    assert speaker_label("user", "p1", "p1", "Ana Lima") == "Ana Lima"
    assert speaker_label("user", "Priya", "tom", None) == "Priya"
    assert speaker_label("user", None, None, None) == "user"
    assert name_words("Ana Lima") == ("ana", "lima") and name_words("assistant") == ()
    text = window_text([Turn(1, "Priya", "so  much\nwork"), Turn(2, "Tom", "x " * 400)])
    assert text.startswith("Priya: so much work\nTom: x x")
    assert text.endswith("…") and len(text) < 320


def test_stored_vectors_keep_their_direction_and_scoped_nearest_windows_come_best_first() -> None:
    vectors = np.eye(4, dtype=np.float32)
    back = decode_vectors([encode_vector(v) for v in vectors], 4)
    assert np.allclose(back, vectors)
    matrix = VectorMatrix(4, "db:model:1")
    matrix.append([VectorRow(i + 1, f"c{i % 2}", f"s{i}", vectors[i]) for i in range(4)], 4)
    query = np.array([0.9, 0.1, 0.4, 0.0], dtype=np.float32)
    assert [w for w, _ in matrix.nearest(query, 3)] == [1, 3, 2]
    assert [w for w, _ in matrix.nearest(query, 3, conversations=["c1"])] == [2, 4]
    assert [w for w, _ in matrix.nearest(query, 3, excluded_segment="s0")] == [3, 2, 4]
    assert matrix.nearest(query, 3, conversations=["nobody"]) == []
