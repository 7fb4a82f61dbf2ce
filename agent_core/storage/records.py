"""Frozen records that cross the state store's boundary; they never carry a live connection or cursor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agent_core.actor import Actor


class EndReason(StrEnum):
    """Why a segment or conversation ended; stored as its string value (other strings are allowed)."""

    COMPRESSION = "compression"
    RESET = "reset"
    IDLE = "idle"
    NEW = "new"
    DAILY = "daily"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a conversation belongs to and where it is held; copied onto every segment so no continuation
    loses it. Built from the ``Actor`` by ``of`` (never field by field), so who-fields match the actor's."""

    person_id: str | None = None
    platform: str | None = None
    user_id: str | None = None
    chat_id: str | None = None
    chat_type: str | None = None
    thread_id: str | None = None
    display_name: str | None = None

    @classmethod
    def of(
        cls,
        actor: Actor,
        *,
        chat_id: str | None = None,
        chat_type: str | None = None,
        thread_id: str | None = None,
    ) -> Principal:
        """``actor`` (person, platform, account, display name) in the chat ``chat_id``/``thread_id``."""
        return cls(
            person_id=actor.person_id,
            platform=actor.platform,
            user_id=actor.account_id,
            chat_id=chat_id,
            chat_type=chat_type,
            thread_id=thread_id,
            display_name=actor.display_name,
        )


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to persist; content is what was said, api_content the exact bytes sent when they differ."""

    role: str
    content: str | None
    tool_calls: Sequence[Mapping[str, Any]] | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    reasoning: str | None = None
    author: str | None = None
    platform_message_id: str | None = None
    api_content: str | None = None
    created_at: float | None = None


@dataclass(frozen=True, slots=True)
class MessageRecord:
    """A persisted message; ids order one segment's messages (the rule: agent_core.storage.messages)."""

    id: int
    session_id: str
    conversation_id: str
    role: str
    content: str | None
    tool_calls: tuple[Mapping[str, Any], ...] | None
    tool_call_id: str | None
    tool_name: str | None
    reasoning: str | None
    author: str | None
    platform_message_id: str | None
    api_content: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts and known cost (USD) — a segment's running totals, or the tokens one call reported.

    ``cost_usd`` sums only priced calls (an unpriced call adds 0 here; the usage log keeps its NULL)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cost_usd + other.cost_usd,
        )


class UsageKind(StrEnum):
    """Why a model call was made; the usage log stores the string value (other strings are allowed)."""

    TURN = "turn"
    COMPRESSION = "compression"
    FLUSH = "flush"
    SEARCH_SUMMARY = "search_summary"
    PROVIDER_EXTRACTION = "provider_extraction"


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call as the usage log records it: the tokens it spent, which model, why it was made, and
    its cost priced when it was recorded (``cost_usd`` None: the model has no price — never a guess).

    Who caused it is not carried here: the backend copies the person and platform from the conversation of
    the segment it is recorded against, in the statement that records it.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    model: str | None = None
    kind: str = UsageKind.TURN

    @property
    def spent_nothing(self) -> bool:
        """A call that reported no tokens: nothing to add and no row worth logging."""
        return not (
            self.input_tokens or self.output_tokens or self.cache_read_tokens or self.cache_write_tokens
        )

    def tokens(self) -> TokenUsage:
        """What the segment's counters add: the tokens, and the cost when it is known (else nothing)."""
        return TokenUsage(
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.cost_usd or 0.0,
        )


@dataclass(frozen=True, slots=True)
class SegmentRecord:
    """One segment (the anchor's "session") of a conversation, with its frozen system prompt."""

    id: str
    conversation_id: str
    parent_session_id: str | None
    system_prompt: str | None
    model: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    usage: TokenUsage
    title: str | None
    principal: Principal
    session_key: str


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    """A conversation: one stable id for its whole life, pointing at its current tip segment."""

    id: str
    session_key: str
    person_id: str | None
    platform: str | None
    title: str | None
    created_at: float
    ended_at: float | None
    end_reason: str | None
    tip_session_id: str


@dataclass(frozen=True, slots=True)
class NewSegment:
    """What a new segment starts with: its frozen system prompt and model."""

    system_prompt: str | None = None
    model: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Compressed:
    """The compression switch happened: the parent ended and ``child`` is the new tip."""

    parent_session_id: str
    child: SegmentRecord
    message_ids: tuple[int, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class AlreadyCompressed:
    """The parent had already ended, so nothing was written (no fork); ``tip_session_id`` is current."""

    parent_session_id: str
    parent_end_reason: str | None
    tip_session_id: str


CompressionResult = Compressed | AlreadyCompressed


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Counters for metrics: write retries after "database is locked", commits, indexer activity.

    ``round_trips``: calls this store made into state.db (each one read or write transaction) since it was
    created; on a networked backend each is at least one network hop, so benches report it per turn.
    """

    write_retries: int
    write_commits: int
    journal_mode: str
    indexer_active: bool
    rows_indexed: int
    index_rebuilds: int
    backpressure_pauses: int
    round_trips: int = 0
