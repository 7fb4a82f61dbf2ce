"""The admin console's read port: full transcripts, activity over time, usage since a time, the audit log,
``/link`` history and failed deliveries — what the operator's pages show beyond ``AdminReads``.

Invariants every backend keeps: nothing here writes; every method is one read (one snapshot); pages hold at
most ``MAX_PAGE`` rows (a larger ``limit`` is clamped, a limit below 1 reads as 1, a negative offset as 0);
times are epoch seconds of the backend's clock; a link code's value is never returned (an open code is a
secret that joins an account to a person).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_core.storage.audit import MemoryAuditRecord
from agent_core.storage.records import MessageRecord

from .admin_reads import Page


@dataclass(frozen=True, slots=True)
class ActivityBucket:
    """What happened in one time bucket starting at ``start``: turns finished by outcome, failed deliveries
    (outbox rows given up on, counted at the time they were queued)."""

    start: float
    turns_done: int
    turns_failed: int
    deliveries_failed: int


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Model usage summed over the recorded model calls in a time range (``calls``: how many)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True, slots=True)
class FailedDelivery:
    """An outbox row the delivery loop gave up on, with the platform's last error."""

    id: int
    conversation_id: str
    platform: str | None
    chat_ref: str
    kind: str
    text: str
    attempts: int
    created_at: float
    error: str | None


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """One ``/link`` code a person was issued (never its value): ``used_by`` is ``platform:account`` when it
    joined that account, another word (``superseded``, a void reason) when it was used up otherwise, and
    None while it is open or after it expired unused."""

    created_at: float
    expires_at: float
    used_at: float | None
    used_by: str | None

    @property
    def linked_account(self) -> str | None:
        """The account this code joined to its person, if it did."""
        return self.used_by if self.used_by is not None and ":" in self.used_by else None


class ConsoleReads(Protocol):
    """Read-only views for the admin console."""

    async def transcript(
        self, conversation_id: str, *, after_id: int = 0, limit: int = 100
    ) -> tuple[MessageRecord, ...]:
        """A conversation's messages with id above ``after_id``, every segment, oldest first, in full: tool
        calls with their arguments, tool results, the ``api_content`` sidecar (recall fences)."""
        ...

    async def activity(self, *, since: float, bucket_s: int) -> tuple[ActivityBucket, ...]:
        """Buckets of ``bucket_s`` seconds from ``since`` (aligned to ``since``) up to now that saw any
        finished turn or failed delivery, oldest first; empty buckets are left out."""
        ...

    async def usage_since(self, since: float) -> UsageTotals:
        """Model usage of every call recorded at or after ``since``."""
        ...

    async def audit_log(
        self, *, person_id: str | None = None, limit: int = 50, offset: int = 0
    ) -> Page[MemoryAuditRecord]:
        """Curated-memory audit records (of one person, or everyone's), newest first (ties: newest id)."""
        ...

    async def link_history(self, person_id: str) -> tuple[LinkRecord, ...]:
        """Every ``/link`` code issued to the person, newest first."""
        ...

    async def failed_deliveries(self, *, limit: int = 50, offset: int = 0) -> Page[FailedDelivery]:
        """Outbox rows in state ``failed``, newest first."""
        ...
