"""The person-data read port: what an export of one person reads besides the other ports — the model calls
they caused, and their own words in conversations someone else owns.

Invariants every backend keeps: nothing here writes; every method is one read (one snapshot) of at most
``MAX_PAGE`` rows (a larger ``limit`` is clamped, a limit below 1 reads as 1), cut by id so a caller pages
through any amount with bounded memory; a method named for a person returns only rows of that person
(usage attributed to them, messages they authored), never another person's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_core.storage.records import MessageRecord


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One logged model call (``usage_log``): when, in which conversation and segment, what it used and
    cost (None: the model has no price), which model, why (``kind``: a turn, a summary, …) and on which
    platform."""

    id: int
    at: float
    conversation_id: str
    segment_id: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None
    model: str | None
    kind: str
    platform: str | None


class PersonData(Protocol):
    """Person-scoped reads for an export, page by page."""

    async def usage(self, person_id: str, *, after_id: int = 0, limit: int = 500) -> tuple[UsageRecord, ...]:
        """Model calls the person caused (``usage_log.person_id``), with id above ``after_id``, by id."""
        ...

    async def joined_conversations(self, person_id: str) -> tuple[str, ...]:
        """Conversations owned by someone else (or no one) in which the person wrote a user message, by id."""
        ...

    async def authored_messages(
        self, conversation_id: str, person_id: str, *, after_id: int = 0, limit: int = 500
    ) -> tuple[MessageRecord, ...]:
        """The person's own user messages in one conversation with id above ``after_id``, oldest first."""
        ...
