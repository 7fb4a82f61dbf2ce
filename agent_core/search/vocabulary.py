"""Vocabulary-driven plan refinements: trigram prefix bounds and document-frequency trimming.

Invariant: pure functions over an FtsQuery; they only remove clauses or return bounds, so a
refined plan is never broader or less safe than the one the builder produced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

from agent_core.search.plan import ClauseRole, FtsClause, FtsIndex, FtsQuery

DEFAULT_MAX_SHARE: Final = 0.25


def trigram_prefix_bounds(prefix: str) -> tuple[str, str]:
    """`term >= low AND term < high` bounds selecting vocabulary trigrams that start with `prefix`."""
    folded = prefix.lower()  # the trigram tokenizer folds case by default
    return folded, folded + "\U0010ffff"


def doc_count_limit(total_docs: int, max_share: float = DEFAULT_MAX_SHARE) -> int:
    """LIMIT for a bounded per-clause document count: one more than the trimming threshold."""
    return int(max(total_docs, 0) * max_share) + 1


def trim_common_clauses(
    query: FtsQuery,
    doc_counts: Mapping[FtsClause, int],
    total_docs: int,
    *,
    max_share: float = DEFAULT_MAX_SHARE,
) -> FtsQuery:
    """Drop clauses found in more than `max_share` of `total_docs`, keeping each expression's rarest.

    Clauses without a count are kept. An expression never loses all of its clauses.
    """
    threshold = total_docs * max_share
    kept: list[FtsClause] = []
    groups: dict[tuple[FtsIndex, ClauseRole], list[FtsClause]] = {}
    for clause in query.clauses:
        groups.setdefault((clause.index, clause.role), []).append(clause)
    for group in groups.values():
        survivors = [c for c in group if c not in doc_counts or doc_counts[c] <= threshold]
        if not survivors:
            survivors = [min(group, key=lambda c: doc_counts[c])]
        kept.extend(survivors)
    order = {clause: position for position, clause in enumerate(query.clauses)}
    return dataclasses.replace(query, clauses=tuple(sorted(kept, key=order.__getitem__)))
