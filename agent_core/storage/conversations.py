"""The agent's conversation port: conversations, their segments, and the compression chain that links them.

Invariants every backend keeps: a conversation keeps one id for its whole life and always names an
existing tip segment; at most one live conversation exists per session key; every segment carries the
full principal of its conversation; ending (a conversation or a segment) is first-writer-wins; a segment
has at most one child, so the chain never forks, and the conversation's tip is the end of that chain.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from .records import (
    CompressionResult,
    ConversationRecord,
    EndReason,
    ModelCall,
    NewMessage,
    NewSegment,
    Principal,
    SegmentRecord,
)


class ConversationRepository(Protocol):
    """Conversations by session key, their segments, each segment's frozen system prompt and its usage."""

    async def ensure_conversation(
        self, session_key: str, principal: Principal, segment: NewSegment | None = None
    ) -> ConversationRecord:
        """The live conversation for ``session_key``, creating it with a first segment if there is none.

        One transaction: the conversation and its first segment appear together.
        """
        ...

    async def start_new_conversation(
        self,
        session_key: str,
        principal: Principal,
        segment: NewSegment | None = None,
        *,
        reason: str = EndReason.NEW,
    ) -> ConversationRecord:
        """End the key's live conversation (if any) with ``reason`` and start a new one.

        One transaction: no moment exists with two live conversations for the key, or none after a crash.
        """
        ...

    async def end_conversation(self, conversation_id: str, reason: str) -> bool:
        """End a conversation and its tip segment; False if it had already ended (the first reason stays)."""
        ...

    async def live_conversation(self, session_key: str) -> ConversationRecord | None:
        """The key's conversation that has not ended, if any."""
        ...

    async def get_conversation(self, conversation_id: str) -> ConversationRecord | None: ...

    async def get_segment(self, segment_id: str) -> SegmentRecord | None: ...

    async def segments(self, conversation_id: str) -> list[SegmentRecord]:
        """Every segment the conversation has, oldest first — the lineage, and nothing else if none forked."""
        ...

    async def resolve_tip(self, segment_or_conversation_id: str) -> SegmentRecord:
        """The tip segment of the conversation that a segment id or conversation id belongs to.

        Raises ``UnknownSegmentError`` when the id names neither.
        """
        ...

    async def lineage(self, segment_or_conversation_id: str) -> list[SegmentRecord]:
        """The conversation's segments following parent links, root first, tip last."""
        ...

    async def freeze_system_prompt(self, segment_id: str, prompt: str) -> str:
        """Freeze ``prompt`` on the segment unless one is frozen already; the frozen prompt.

        The first writer wins, so every process sends the same bytes for the whole segment. Raises
        ``UnknownSegmentError`` for an unknown segment.
        """
        ...

    async def add_usage(self, segment_id: str, call: ModelCall) -> None:
        """Record one model call against the segment: its tokens and known cost added to the segment's
        counters, and (unless it spent nothing) one ``usage_log`` row with its model, kind and cost and the
        person and platform of the segment's conversation. ``UnknownSegmentError``: no such segment."""
        ...


class CompressionChain(Protocol):
    """The atomic switch from a segment to its compressed child."""

    async def compress(
        self,
        parent_segment_id: str,
        child: NewSegment,
        messages: Sequence[NewMessage],
        *,
        seen: Collection[int] | None = None,
    ) -> CompressionResult:
        """End ``parent_segment_id`` with ``compression`` and start its child holding ``messages``.

        One transaction: end the parent, create the child (with the parent's principal and session key),
        write ``messages`` and then the carried-over ones, move the conversation's tip. Refused — nothing
        written, ``AlreadyCompressed`` naming the current tip — when the parent has ended or is not the
        tip any more, so two racing compressions leave exactly one child.

        Carry-over rule (no ordering assumption): ``seen`` holds the ids of every parent message the
        compression plan read; each message of the parent whose id is NOT in ``seen`` (one stored while
        the summary was being written) is copied to the end of the child, in the parent's order. With
        ``seen=None`` nothing is carried over. A backend therefore needs no "ids are visible in commit
        order" guarantee here: it compares sets, not a high-water mark. It must only serialise the switch
        with appends to the parent (SQLite: the single writer; a concurrent backend: both lock the
        parent's segment row first), so an append either commits before the switch and is carried over,
        or finds the parent ended and lands in the tip (``MessageRepository.append_messages``).
        """
        ...
