"""The admin read port: what operators, the web chat's history, ``/metrics``, the CLI and the benches read.

(The memory audit is the agent's: ``agent_core.storage.MemoryAuditLog.memory_audit``.)

Invariants every backend keeps: nothing here writes; every method is one read (one snapshot), so a page
and its total, or a chat's transcript and its notices, agree with each other; pages hold at most
``MAX_PAGE`` rows (a larger ``limit`` is clamped, a limit below 1 reads as 1) and a negative offset reads as
0; session-key prefixes match exactly — byte for byte, case-sensitive, with no wildcard characters — so one
browser's prefix never finds another browser's conversation. Cursors named ``after``/``position`` are
positions in commit order: a backend whose writers commit concurrently hands out a commit-time sequence
there, never an id that can become visible after a larger one was read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from .outbox import ChatNotice

T = TypeVar("T")

MAX_PAGE = 500
"""The most rows one page holds."""


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of rows plus the total matching rows (for ``offset + limit < total`` paging)."""

    rows: tuple[T, ...]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """One conversation in an admin listing, with message counts for a quick overview."""

    id: str
    session_key: str
    person_id: str | None
    platform: str | None
    title: str | None
    created_at: float
    ended_at: float | None
    end_reason: str | None
    tip_session_id: str
    message_count: int
    last_message_at: float | None


@dataclass(frozen=True, slots=True)
class MessageRow:
    """A message as the admin API shows it (no api_content sidecar, no raw tool arguments).

    ``session_id`` is the id of the segment holding the message (the admin API's field name).
    """

    id: int
    session_id: str
    role: str
    content: str | None
    tool_name: str | None
    author: str | None
    platform_message_id: str | None
    created_at: float
    has_tool_calls: bool


@dataclass(frozen=True, slots=True)
class PersonRow:
    """A person (memory owner) and the platform accounts mapped to them (``platform:account_id``)."""

    id: str
    display_name: str | None
    created_at: float
    accounts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChatHistory:
    """What a chat window shows: its live conversation's tip transcript and the notices sent since.

    ``conversation_id`` is None when the chat has no live conversation (then ``transcript`` is empty).
    """

    conversation_id: str | None
    transcript: tuple[MessageRow, ...]
    notices: tuple[ChatNotice, ...]


@dataclass(frozen=True, slots=True)
class TokenTotals:
    """Model tokens summed over a conversation's segments."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class GatewayCounters:
    """Totals for the metrics scrape, read from the database so every process's work is counted."""

    jobs_by_state: tuple[tuple[str, int], ...]
    outbox_by_state: tuple[tuple[str, int], ...]
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


@dataclass(frozen=True, slots=True)
class FinishedTurn:
    """A turn job that finished (done or failed) and how long it took from enqueue to finish."""

    job_id: int
    finished_at: float
    seconds: float


@dataclass(frozen=True, slots=True)
class QueuedReply:
    """A reply queued in the outbox; ``position`` orders replies by commit (the cursor to read after)."""

    position: int
    conversation_id: str
    created_at: float


@dataclass(frozen=True, slots=True)
class MessageTally:
    """A conversation's user messages and final assistant replies (assistant rows without tool calls)."""

    conversation_id: str
    user_messages: int
    assistant_replies: int


class AdminReads(Protocol):
    """Read-only views over conversations, persons, the queue and the outbox."""

    async def conversations(
        self,
        *,
        platform: str | None = None,
        person_id: str | None = None,
        active: bool | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Page[ConversationRow]:
        """Conversations matching every given filter, newest first (ties by id).

        ``since``/``until`` keep the conversations open at some time in ``[since, until)``: started before
        ``until`` and not ended before ``since``.
        """
        ...

    async def recent_conversations(self, *, limit: int, include_ended: bool) -> tuple[ConversationRow, ...]:
        """The newest ``limit`` conversations, live ones only unless ``include_ended`` (``mnemogate sessions
        list``); ``limit`` is not clamped to a page."""
        ...

    async def conversation(self, conversation_id: str) -> ConversationRow | None:
        """One conversation with its counts, or None."""
        ...

    async def messages(
        self, conversation_id: str, *, after_id: int = 0, limit: int = 100
    ) -> tuple[MessageRow, ...]:
        """A conversation's messages (every segment) with id above ``after_id``, oldest first."""
        ...

    async def persons(self, *, limit: int = 50, offset: int = 0) -> Page[PersonRow]:
        """Persons with their accounts, oldest first."""
        ...

    async def person(self, person_id: str) -> PersonRow | None:
        """One person with their accounts, or None."""
        ...

    async def live_conversation(self, key_prefix: str) -> str | None:
        """The id of the newest live conversation whose session key starts with exactly ``key_prefix``.

        Raises ValueError for an empty prefix (it would match every conversation).
        """
        ...

    async def last_ended(self, key_prefix: str) -> float | None:
        """When the newest ended conversation whose session key starts with exactly ``key_prefix`` ended."""
        ...

    async def chat_history(self, key_prefix: str, chat_ref: str, *, limit: int = 200) -> ChatHistory:
        """One read: the chat window of the conversation whose session key starts with ``key_prefix``.

        With a live conversation: its tip segment's user messages and non-empty assistant text (no tool
        calls), the newest ``limit``, and the notices (command replies, acknowledgements, refusals) queued
        for ``chat_ref`` since that segment began. Without one: no transcript, and the notices since the
        newest ended conversation of the prefix ended (every notice when none ever ended).
        """
        ...

    async def live_token_totals(self, key_prefix: str) -> TokenTotals:
        """Tokens of the newest live conversation whose session key starts with ``key_prefix`` (0 if none)."""
        ...

    async def gateway_counters(self) -> GatewayCounters:
        """Job and outbox counts by state, and model token totals over every segment."""
        ...

    async def finished_turns(self, finished_after: float, *, limit: int = 10_000) -> tuple[FinishedTurn, ...]:
        """Jobs finished (done or failed) after ``finished_after``, oldest finish first.

        ``finished_after`` is a watermark (the metrics scrape moves it to the newest ``finished_at`` it
        read), so a backend stamps ``finished_at`` inside the finishing transaction, in commit order: no job
        may become visible later with a ``finished_at`` below one already readable (SQLite: the stamp is
        taken under the single writer's lock; a concurrent backend: a commit-ordered clock or sequence).
        """
        ...

    async def outbox_count(self, *, kind: str | None = None) -> int:
        """Outbox rows (of one ``kind``, e.g. ``reply``), whatever their state."""
        ...

    async def inbound_count(self, *, platform: str | None = None) -> int:
        """Platform events recorded in the inbound ledger (of one ``platform``), turns and commands alike."""
        ...

    async def queued_replies(self, *, after: int = 0, limit: int = 1_000) -> tuple[QueuedReply, ...]:
        """Replies (kind ``reply``) queued at a position above ``after``, in position order."""
        ...

    async def message_tallies(self) -> tuple[MessageTally, ...]:
        """Every conversation's user messages and final assistant replies (benches and load tests)."""
        ...
