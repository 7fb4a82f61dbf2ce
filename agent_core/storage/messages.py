"""The agent's message port: appending a segment's messages and reading them back in the segment's order.

Ordering rule (every backend): a segment's messages are ordered by ``MessageRecord.id``, and the ids of
one segment's messages increase in the order their transactions commit. SQLite honours it because it
serialises every writer; a concurrent backend does by taking the segment's row lock before it inserts
(so appends to one segment are serialised and the sequence value drawn under the lock is also the
commit order). Nothing else is promised about ids: across segments or conversations an id says nothing
about commit order, so no caller may treat "the largest id I read" as a point below which nothing new
can appear — compression names the exact ids it saw instead (``CompressionChain.compress``).

Every stored text passes the persistence boundary first (secrets redacted, valid UTF-8), so what is read
back may differ from what was appended exactly there and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .records import MessageRecord, ModelCall, NewMessage, SegmentRecord


@dataclass(frozen=True, slots=True)
class SegmentHistory:
    """A segment and its messages in the segment's order, read together in one consistent read."""

    segment: SegmentRecord
    messages: tuple[MessageRecord, ...]


class MessageRepository(Protocol):
    """Messages of segments; an append to a segment that a compression ended lands in the current tip."""

    async def append_messages(
        self, segment_id: str, messages: Sequence[NewMessage], usage: ModelCall | None = None
    ) -> list[int]:
        """Persist one step's messages; their ids, in order.

        One transaction: all of ``messages`` or none, and ``usage`` (the step's model call) recorded
        against ``segment_id`` as ``ConversationRepository.add_usage`` records it. If a compression ended
        ``segment_id`` meanwhile, the rows go to the conversation's tip (after the messages the switch
        carried over), because a turn that started on the parent continues on the child.
        """
        ...

    async def append_message(self, segment_id: str, message: NewMessage) -> int:
        """``append_messages`` of one message; its id."""
        ...

    async def set_api_content(self, message_id: int, api_content: str | None) -> None:
        """Store the exact text sent to the model for a message when it differs from its content.

        Raises ``UnknownMessageError`` when no message has that id.
        """
        ...

    async def segment_messages(self, segment_id: str) -> list[MessageRecord]:
        """The segment's messages in the segment's order (empty for an unknown segment)."""
        ...

    async def conversation_messages(self, conversation_id: str) -> list[MessageRecord]:
        """Every message of every segment of the conversation, oldest segment first."""
        ...

    async def tip_history(self, segment_or_conversation_id: str) -> SegmentHistory:
        """The conversation's tip segment with its messages, in one read (a turn's opening read).

        Raises ``UnknownSegmentError`` when the id names neither a segment nor a conversation.
        """
        ...
