"""Ranking conversations for a search: participant names demoted, windows of turns, lexical and semantic
fused.

Invariants (pure functions, no I/O):
- ``demote_names``: a clause made only of words that name a speaker of the searched conversations is
  dropped, unless dropping would leave nothing to look for ("Priya" alone still finds Priya);
- ``window_ranking``: a window's lexical relevance is the sum of its matching messages' relevance (the
  negated backend score), a message in no stored window counts as a window of its own, and a conversation
  ranks by its best window; ``message_ranking`` is the former rule (best single message);
- ``participant_ranking``: the demoted names still rank the conversations where they speak, weakly;
- ``fuse``: reciprocal rank fusion, ``sum(weight / (k + rank))`` over the rankings a conversation is in,
  ties to the conversation first reached by the lexical ranking; semantic windows less similar than the
  nearest one by more than a margin take no part; the evidence of a conversation is its best lexical
  window's matching messages, its other matches, then its best semantic window's turns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from agent_core.storage.search_index import (
    MatchKind,
    PlannedQuery,
    QueryClause,
    SearchHit,
    WindowHit,
    WindowRef,
)


def name_candidates(plan: PlannedQuery) -> tuple[str, ...]:
    """The words of a plan that could be a participant's name (looked up before ranking)."""
    words = {word.casefold() for clause in plan.clauses for word in clause.text.split()}
    return tuple(sorted(word for word in words if len(word) >= 2 and any(ch.isalpha() for ch in word)))


def demote_names(plan: PlannedQuery, names: frozenset[str]) -> tuple[PlannedQuery, tuple[str, ...]]:
    """``plan`` without its clauses that only name participants (unless nothing else is left), and the
    names dropped."""
    if not names:
        return plan, ()

    def only_names(clause: QueryClause) -> bool:
        words = clause.text.casefold().split()
        return bool(words) and all(word in names for word in words)

    kept = tuple(c for c in plan.clauses if not only_names(c))
    if (
        not any(c.kind in (MatchKind.WORDS, MatchKind.SUBSTRING) for c in kept)
        and not plan.substring_prefixes
    ):
        return plan, ()
    dropped = tuple(dict.fromkeys(c.text for c in plan.clauses if only_names(c)))
    return dataclasses.replace(plan, clauses=kept), dropped


@dataclass(frozen=True, slots=True)
class RankedConversation:
    """One conversation in a ranking: its relevance (higher is better) and its evidence, best first."""

    conversation_id: str
    relevance: float
    evidence: tuple[int, ...]


def message_ranking(hits: Sequence[SearchHit]) -> list[RankedConversation]:
    """Conversations by their best matching message (hits arrive best first)."""
    ranked: dict[str, list[int]] = {}
    best: dict[str, float] = {}
    for hit in hits:
        cid = hit.message.conversation_id
        best.setdefault(cid, -hit.score)
        ranked.setdefault(cid, []).append(hit.message.id)
    return [RankedConversation(cid, best[cid], tuple(ids)) for cid, ids in ranked.items()]


def window_ranking(
    hits: Sequence[SearchHit], windows: Mapping[int, Sequence[WindowRef]]
) -> list[RankedConversation]:
    """Conversations by their best window: the summed relevance of the window's matching messages."""
    relevance = {hit.message.id: -hit.score for hit in hits}
    conversation_of = {hit.message.id: hit.message.conversation_id for hit in hits}
    totals: dict[tuple[str, int | None, int], float] = {}
    members: dict[tuple[str, int | None, int], list[int]] = {}
    for hit in hits:
        message_id = hit.message.id
        refs = windows.get(message_id) or ()
        keys: list[tuple[str, int | None, int]] = [
            (conversation_of[message_id], ref.id, 0) for ref in refs
        ] or [(conversation_of[message_id], None, message_id)]
        for key in keys:
            if key in totals:
                continue
            ids = [i for i in (_members(refs, key[1]) or (message_id,)) if i in relevance]
            totals[key] = sum(relevance[i] for i in ids)
            members[key] = sorted(ids, key=lambda i: -relevance[i])
    best: dict[str, tuple[float, tuple[int, ...]]] = {}
    for key, total in sorted(totals.items(), key=lambda item: -item[1]):
        best.setdefault(key[0], (total, tuple(members[key])))
    others: dict[str, list[int]] = {}
    for hit in hits:  # best first: the conversation's other matches follow its best window's
        others.setdefault(hit.message.conversation_id, []).append(hit.message.id)
    return [
        RankedConversation(cid, total, ids + tuple(i for i in others[cid] if i not in ids))
        for cid, (total, ids) in best.items()
    ]


def _members(refs: Iterable[WindowRef], window_id: int | None) -> tuple[int, ...] | None:
    return next((ref.message_ids for ref in refs if ref.id == window_id), None)


def semantic_ranking(hits: Sequence[WindowHit], margin: float) -> list[RankedConversation]:
    """Conversations by their nearest window, among windows within ``margin`` of the nearest overall."""
    if not hits:
        return []
    floor = hits[0].similarity - margin
    ranked: dict[str, RankedConversation] = {}
    for hit in hits:
        if hit.similarity < floor:
            break
        cid = hit.window.conversation_id
        if cid not in ranked:
            ranked[cid] = RankedConversation(cid, hit.similarity, hit.window.message_ids)
    return list(ranked.values())


def participant_ranking(
    participants: Mapping[str, Sequence[str]], names: Sequence[str]
) -> list[RankedConversation]:
    """Conversations where the named participants speak, those with more of the names first (ties share
    a rank): the demoted names still say whose conversations are meant, without outranking evidence."""
    counts: dict[str, int] = {}
    for name in dict.fromkeys(n.casefold() for n in names):
        for conversation_id in participants.get(name, ()):
            counts[conversation_id] = counts.get(conversation_id, 0) + 1
    order = sorted(counts, key=lambda cid: -counts[cid])
    return [RankedConversation(cid, float(counts[cid]), ()) for cid in order]


def fuse(rankings: Sequence[tuple[Sequence[RankedConversation], float]], k: int) -> list[RankedConversation]:
    """Reciprocal rank fusion of ``(ranking, weight)`` pairs; items of equal relevance share a rank;
    evidence is concatenated in ranking order."""
    scores: dict[str, float] = {}
    evidence: dict[str, list[int]] = {}
    for ranking, weight in rankings:
        for rank, item in _ranked(ranking):
            scores[item.conversation_id] = scores.get(item.conversation_id, 0.0) + weight / (k + rank)
            known = evidence.setdefault(item.conversation_id, [])
            known.extend(i for i in item.evidence if i not in known)
    order = sorted(scores, key=lambda cid: -scores[cid])  # stable: first-seen order breaks ties
    return [RankedConversation(cid, scores[cid], tuple(evidence[cid])) for cid in order]


def _ranked(ranking: Sequence[RankedConversation]) -> Iterator[tuple[int, RankedConversation]]:
    """Competition ranks: an item as relevant as the one before it shares that one's rank."""
    rank = 0
    previous: float | None = None
    for position, item in enumerate(ranking, start=1):
        if previous is None or item.relevance != previous:
            rank = position
        previous = item.relevance
        yield rank, item
