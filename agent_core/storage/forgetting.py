"""The forgetting port: deleting conversations completely, and the memory audit's texts of one person.

Invariants every backend keeps: ``forget_conversations`` removes each named conversation with everything
the agent's storage derived from it — its segments (the compression chain and frozen system prompts), its
messages, their search-index entries (words, trigrams, windows, window vectors, participant names), its
compression cooldown — so none of its text can be read, searched or recovered from the backend's files
afterwards (SQLite: freed pages are zeroed and the WAL files are emptied; PostgreSQL: see the backend for
what dead tuples keep until vacuum); the usage rows of its model calls stay, with their numbers, but their
link to the conversation and segment is replaced by ``FORGOTTEN`` so totals still add up; forgetting is
idempotent (unknown or already forgotten ids are counted as nothing) and safe while the search index is
being built concurrently (an entry is never indexed after its message was forgotten).
What else refers to a conversation outside the agent's storage (the gateway's outbox, jobs, schedules) is
the caller's to forget (``gateway.storage.erasure``).

Cost (SQLite, measured here): one call is dominated by one full merge of search.db's FTS indexes, whatever
the number of conversations — 0.09 s at 20,000 indexed messages, 0.3 s at 100,000 (1 or 10 conversations
alike) — so a bulk caller (retention) passes many ids per call. PostgreSQL deletes rows and index entries.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final, Protocol

FORGOTTEN: Final = "forgotten"
"""What a usage row names instead of the conversation and segment it was linked to once they are forgotten."""


@dataclass(frozen=True, slots=True)
class ForgottenConversations:
    """What one ``forget_conversations`` call removed (and, for usage, unlinked)."""

    conversations: int = 0
    segments: int = 0
    messages: int = 0
    usage_rows_unlinked: int = 0

    def __add__(self, other: ForgottenConversations) -> ForgottenConversations:
        return ForgottenConversations(
            self.conversations + other.conversations,
            self.segments + other.segments,
            self.messages + other.messages,
            self.usage_rows_unlinked + other.usage_rows_unlinked,
        )


class Forgetting(Protocol):
    """Deleting what the agent stored, for erasure of a person and retention."""

    async def forget_conversations(self, conversation_ids: Collection[str]) -> ForgottenConversations:
        """Delete the conversations with everything derived from them (see the module's invariants).

        Live conversations are deleted too: a turn still running on one fails when it next writes.
        """
        ...

    async def forget_authored_turns(self, person_id: str) -> int:
        """Delete the person's user messages left in conversations they do not own (a shared thread), each
        with the rest of its turn — the assistant and tool rows after it up to the next user message of its
        segment — and their search entries, as ``forget_conversations`` does; how many messages went.
        A compression summary that retold them is not rewritten."""
        ...

    async def forget_memory_audit_texts(self, person_id: str) -> int:
        """Blank the old and new texts of the person's memory audit records (who, when, what kind stay);
        how many records were blanked."""
        ...
