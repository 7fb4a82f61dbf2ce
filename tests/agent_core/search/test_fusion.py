"""How conversations are ranked: names demoted, windows of turns, lexical and semantic fused."""

from __future__ import annotations

from agent_core.search import plan_query
from agent_core.search.fusion import (
    demote_names,
    fuse,
    message_ranking,
    name_candidates,
    participant_ranking,
    semantic_ranking,
    window_ranking,
)
from agent_core.storage.search_index import FoundMessage, SearchHit, WindowHit, WindowRef


def hit(message_id: int, conversation: str, score: float) -> SearchHit:
    return SearchHit(
        FoundMessage(message_id, conversation, "s-" + conversation, "user", "t", None, 0.0), score
    )


def test_a_name_that_only_names_a_participant_is_dropped_unless_it_is_the_whole_query() -> None:
    plan = plan_query("What went wrong for Priya at work?")
    assert "priya" in name_candidates(plan)
    demoted, dropped = demote_names(plan, frozenset({"priya"}))
    assert dropped == ("Priya",)
    assert {c.text for c in demoted.clauses} >= {"wrong", "work"}
    assert all(c.text != "Priya" for c in demoted.clauses)
    alone = plan_query("Priya")
    assert demote_names(alone, frozenset({"priya"})) == (alone, ())
    assert demote_names(plan, frozenset()) == (plan, ())


def test_greetings_that_name_someone_no_longer_outrank_the_evidence() -> None:
    # Before: "Thanks, Priya!" (short, so a strong name match) in three conversations beat the evidence.
    greetings = [hit(1, "c1", -9.0), hit(2, "c2", -8.5), hit(3, "c3", -8.0)]
    evidence = [hit(10, "c4", -4.0)]
    assert message_ranking(greetings + evidence)[0].conversation_id == "c1"
    # After: the name's clause is gone, so only the evidence matches; the name still favours its speakers.
    by_name = participant_ranking({"priya": ("c1", "c2", "c3", "c4")}, ["Priya"])
    fused = fuse([(message_ranking(evidence), 1.0), (by_name, 0.5)], k=5)
    assert fused[0].conversation_id == "c4"
    assert {r.conversation_id for r in fused} == {"c1", "c2", "c3", "c4"}


def test_a_window_whose_question_and_answer_both_match_beats_one_strong_message() -> None:
    hits = [hit(5, "c1", -5.0), hit(20, "c2", -3.0), hit(21, "c2", -3.0)]
    windows = {
        5: (WindowRef(1, "c1", "s-c1", (4, 5, 6)),),
        20: (WindowRef(7, "c2", "s-c2", (19, 20, 21)),),
        21: (WindowRef(7, "c2", "s-c2", (19, 20, 21)), WindowRef(8, "c2", "s-c2", (21, 22, 23))),
    }
    assert [r.conversation_id for r in message_ranking(hits)] == ["c1", "c2"]
    ranked = window_ranking(hits, windows)
    assert [r.conversation_id for r in ranked] == ["c2", "c1"]
    assert ranked[0].relevance == 6.0 and ranked[0].evidence == (20, 21)
    # A message in no stored window yet (a live segment's newest turn) counts as a window of its own.
    assert window_ranking([hit(99, "c9", -2.0)], {})[0].evidence == (99,)


def test_fusion_lets_a_paraphrase_found_only_by_meaning_rank_and_keeps_lexical_evidence_first() -> None:
    lexical = window_ranking([hit(1, "chess", -6.0)], {})
    near = [
        WindowHit(WindowRef(3, "tourney", "s", (30, 31, 32)), 0.86),
        WindowHit(WindowRef(4, "chess", "s", (1, 2)), 0.84),
        WindowHit(WindowRef(5, "far", "s", (50,)), 0.70),
    ]
    semantic = semantic_ranking(near, margin=0.06)
    assert [r.conversation_id for r in semantic] == ["tourney", "chess"]  # "far" is past the margin
    fused = fuse([(lexical, 1.0), (semantic, 1.0)], k=5)
    assert [r.conversation_id for r in fused] == ["chess", "tourney"]
    assert fused[0].evidence == (1, 2)
    stronger = fuse([(lexical, 1.0), (semantic, 2.0)], k=5)
    assert [r.conversation_id for r in stronger] == ["chess", "tourney"]
    assert fused[1].relevance < fused[0].relevance


def test_conversations_with_more_of_the_named_people_rank_first_and_ties_share_a_rank() -> None:
    ranking = participant_ranking({"priya": ("a", "b"), "tom": ("b", "c")}, ["Priya", "Tom"])
    assert [r.conversation_id for r in ranking] == ["b", "a", "c"]
    fused = fuse([(ranking, 1.0)], k=5)
    assert fused[1].relevance == fused[2].relevance
