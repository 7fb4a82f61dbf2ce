"""The outbox port: replies and notices waiting to be delivered, claimed per platform, with chunk progress.

Invariants every backend keeps: an ``idempotency_key`` is queued at most once, so adding the same delivery
twice (a re-run job, a retried command) adds nothing; the rows of one chat are handed out strictly in the
order they were committed — only a chat's oldest undelivered row can be claimed, so a backend whose writers
commit concurrently orders by a commit-time sequence, not by an id that may become visible late; a claim
lasts ``claim_s`` seconds of the backend's clock, after which any holder may claim the row again and resume
at its first chunk without a receipt; only delivered rows (``sent``) are deleted here, by
``prune_delivered``, together with their chunk progress — pending and sending rows stay, and failed ones
until retention removes them (``gateway.storage.retention``). A claim
with a ``ReplyRouting`` leaves a reply to a waiting caller (the web chat, the API) to the process that
accepted the caller's message for ``grace_s``; the chat's order holds all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

OutboxState = Literal["pending", "sending", "sent", "failed"]
"""A row's delivery state: queued, claimed by a deliverer, delivered, or given up on for good."""

NOTICE_KINDS = ("command", "ack", "notice", "denied", "rate_limited", "budget")
"""Outbox kinds that are not part of any transcript: command replies and the gateway's own notices."""


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """One delivery to queue: ``text`` for the chat ``chat_ref`` (``gateway.storage.chat_refs``) on
    ``platform``; ``job_id`` and ``message_id`` tie a reply to its turn and its assistant message."""

    conversation_id: str
    platform: str
    chat_ref: str
    text: str
    idempotency_key: str
    kind: str = "notice"
    job_id: int | None = None
    message_id: int | None = None
    reply_to: str | None = None
    request_text: str | None = None
    """A command reply's command as the person wrote it, so a chat window can show both after a reload."""


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """One claimed outbox row; ``sent_chunks`` are chunk indexes already delivered (skip them)."""

    id: int
    conversation_id: str
    platform: str
    chat_ref: str
    kind: str
    text: str
    reply_to: str | None
    attempts: int
    idempotency_key: str
    sent_chunks: frozenset[int]


@dataclass(frozen=True, slots=True)
class ChunkReceipt:
    """Chunk ``index`` of a row reached the platform as message ``platform_message_id``."""

    index: int
    platform_message_id: str


@dataclass(frozen=True, slots=True)
class OutboxStatus:
    """A row's delivery state, for tests, the admin API and ``sessions show``."""

    id: int
    kind: str
    text: str
    state: OutboxState
    attempts: int
    error: str | None
    chunks_sent: int


@dataclass(frozen=True, slots=True)
class ChatNotice:
    """A command reply or notice sent to a chat, for a chat window's history."""

    id: int
    text: str
    created_at: float


@dataclass(frozen=True, slots=True)
class ReplyRouting:
    """Which rows a claimer takes at once, on platforms whose caller waits on the process that accepted its
    message (the web chat's feed, an API request): on ``platforms``, a row that answers a message (its
    ``reply_to``) is claimed at once only by a process that names that message in ``awaited``; any process
    may claim it once it is ``grace_s`` old (the accepting process may be gone: the transcript still has
    the reply). Rows that answer no message, and rows of other platforms, are anyone's at once."""

    platforms: frozenset[str]
    awaited: frozenset[str] = frozenset()
    grace_s: float = 10.0


class OutboxRepository(Protocol):
    """The outbox of one storage backend; times are the backend's clock, durations are seconds."""

    async def add(self, entry: OutboxEntry) -> bool:
        """Queue ``entry`` (created now); False when its idempotency key was queued before."""
        ...

    async def claim(
        self,
        platforms: Sequence[str],
        holder: str,
        *,
        claim_s: float,
        limit: int,
        expect_work: bool = False,
        routing: ReplyRouting | None = None,
    ) -> list[OutboxItem]:
        """Claim for ``holder``, for ``claim_s`` seconds, up to ``limit`` rows of ``platforms`` that are
        pending or whose claim expired, each the oldest undelivered row of its chat and, with ``routing``,
        one that ``routing`` gives this claimer now; oldest first.
        ``expect_work``: the caller was told a row was just queued, so a backend that first looks
        (cheaply, without locks) whether anything is claimable may skip that look; the result is the same."""
        ...

    async def record_chunk(self, outbox_id: int, receipt: ChunkReceipt) -> None:
        """Remember that one chunk reached the platform (before the next chunk is sent)."""
        ...

    async def mark_sent(self, outbox_id: int, last: ChunkReceipt | None = None) -> None:
        """One transaction: record ``last`` (the final chunk's receipt, when it is not recorded yet) and
        mark the row delivered, keeping its first chunk's platform message id; the claim ends."""
        ...

    async def note_attempt(self, outbox_id: int, error: str, *, claim_s: float) -> int:
        """Count a failed attempt with its error and extend the claim to ``claim_s`` seconds from now (the
        coming wait, e.g. a platform's retry-after); returns the attempt count."""
        ...

    async def mark_failed(self, outbox_id: int, error: str) -> None:
        """Give the row up for good with ``error``; it is never claimed again, and it stops holding back the
        chat's later rows."""
        ...

    async def release_claims(self, holder: str) -> int:
        """Hand ``holder``'s unfinished rows back for anyone to claim (clean shutdown); returns how many."""
        ...

    async def release_others(self, platforms: Sequence[str], holder: str) -> int:
        """Hand the unfinished rows of ``platforms`` claimed by anyone but ``holder`` back at once: for the
        new owner of those platforms' adapter (only the owner delivers them, so another claim is a previous
        owner's, which can send no more), instead of waiting for the claims to run out; returns how many."""
        ...

    async def prune_delivered(self, *, older_than_s: float, limit: int) -> int:
        """Delete up to ``limit`` rows delivered more than ``older_than_s`` seconds ago (oldest first) with
        their chunk progress; returns how many."""
        ...

    async def is_message_queued(self, message_id: int) -> bool:
        """Whether an assistant message already has an outbox row (so recovery never sends it twice)."""
        ...

    async def for_conversation(self, conversation_id: str) -> list[OutboxStatus]:
        """Every row of a conversation in the order it was queued, with its delivery state."""
        ...

    async def chat_notices(self, chat_ref: str, *, since: float, limit: int = 200) -> tuple[ChatNotice, ...]:
        """The newest ``limit`` rows of ``NOTICE_KINDS`` for ``chat_ref`` created at or after ``since``,
        oldest first."""
        ...
