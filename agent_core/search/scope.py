"""Whose conversations a search may read: one person's (owned or written in), or everything (admins).

Invariant: a scope always names its reader explicitly; there is no default that reads everything, so a
forgotten argument can never widen a person's search to other people's conversations.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.search.errors import SearchScopeError


@dataclass(frozen=True, slots=True)
class SearchScope:
    """The reader of one search.

    ``current_conversation_id``: the conversation the search is made from; its archived (compressed)
    segments are searched like any other, its live tip segment is skipped (already in the context).
    """

    person_id: str | None
    everything: bool = False
    current_conversation_id: str | None = None

    def __post_init__(self) -> None:
        if not self.everything and not self.person_id:
            raise SearchScopeError("a search scope needs a person_id unless it covers everything")

    @classmethod
    def person(cls, person_id: str, *, current_conversation_id: str | None = None) -> SearchScope:
        """Conversations ``person_id`` owns or wrote in."""
        return cls(person_id, False, current_conversation_id)

    @classmethod
    def all_conversations(cls, *, current_conversation_id: str | None = None) -> SearchScope:
        """Every conversation (admins and the operator's console)."""
        return cls(None, True, current_conversation_id)
