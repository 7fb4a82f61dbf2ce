"""Frozen search results: conversations best first, each with a few snippets around its hits.

Invariants: a result names a conversation, never a segment; ``score`` is a relevance where higher is
better, comparable within one search only (the fused rank score, fusion.py); ``to_dict`` is exactly the
public JSON shape ``{"conversation_id", "score", "snippets": [{"message_id", "role", "text"}]}``;
``mode`` says whether the semantic side took part (``hybrid``) or not (``lexical``, with ``note`` saying
why when the caller could expect it to: turned off, model unavailable, index still building).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

UNTRUSTED_LABEL = "[untrusted tool output]"
RecallMode = Literal["hybrid", "lexical"]


@dataclass(frozen=True, slots=True)
class Snippet:
    """A short excerpt of one message around the query's terms.

    ``untrusted`` marks historical tool output (web pages, files, API results): its ``text`` starts
    with UNTRUSTED_LABEL so a model reading it treats it as data, never as instructions.
    """

    message_id: int
    role: str
    text: str
    untrusted: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"message_id": self.message_id, "role": self.role, "text": self.text}


@dataclass(frozen=True, slots=True)
class ConversationResult:
    """One conversation that matched, with metadata for people and models reading the result."""

    conversation_id: str
    score: float
    snippets: tuple[Snippet, ...]
    title: str | None = None
    platform: str | None = None
    person_id: str | None = None
    started_at: float | None = None
    current: bool = False
    summary: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "conversation_id": self.conversation_id,
            "score": self.score,
            "snippets": [snippet.to_dict() for snippet in self.snippets],
        }


@dataclass(frozen=True, slots=True)
class SearchResults:
    """The answer to one search; ``query_truncated`` says the query was cut to the planner's limits."""

    query: str
    conversations: tuple[ConversationResult, ...]
    query_truncated: bool = False
    mode: RecallMode = "lexical"
    note: str | None = None

    def to_json_list(self) -> list[dict[str, object]]:
        return [conversation.to_dict() for conversation in self.conversations]
