"""``PgAgentStore``: the agent's repositories (conversations, messages, chain, audit, cooldowns) on Postgres.

Invariants: implements ``agent_core.storage.AgentStorage``; every method the port promises as one
transaction is one ``run_write`` (read committed, re-run whole after a serialization failure or deadlock),
every read of several statements is one ``run_read`` snapshot; texts pass the persistence boundary
(``messages.prepare`` / ``clean_text``) before any transaction starts; the SQL lives in the sibling
modules, whose functions other repositories call inside their own transactions.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agent_core.actor import Actor

from ..audit import MemoryAuditRecord
from ..cooldowns import CompressionCooldown
from ..forgetting import ForgottenConversations
from ..messages import SegmentHistory
from ..records import (
    CompressionResult,
    ConversationRecord,
    EndReason,
    MessageRecord,
    ModelCall,
    NewMessage,
    NewSegment,
    Principal,
    SegmentRecord,
)
from . import audit, chain, conversations, forget
from . import messages as message_rows
from .engine import Conn, PgDatabase


class PgAgentStore:
    """``AgentStorage`` over one ``PgDatabase`` (its pool shared with the other repositories)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    # -- conversations -------------------------------------------------------------------------

    async def ensure_conversation(
        self, session_key: str, principal: Principal, segment: NewSegment | None = None
    ) -> ConversationRecord:
        """The live conversation for ``session_key``, creating it with a first segment if needed."""
        spec = segment or NewSegment()

        async def work(conn: Conn) -> ConversationRecord:
            record, _ = await conversations.ensure_conversation(conn, session_key, principal, spec)
            return record

        return await self._db.run_write(work)

    async def start_new_conversation(
        self,
        session_key: str,
        principal: Principal,
        segment: NewSegment | None = None,
        *,
        reason: str = EndReason.NEW,
    ) -> ConversationRecord:
        """End the key's live conversation with ``reason`` and start a new one, in one transaction."""
        spec = segment or NewSegment()
        return await self._db.run_write(
            lambda conn: conversations.start_new_conversation(conn, session_key, principal, spec, reason)
        )

    async def end_conversation(self, conversation_id: str, reason: str) -> bool:
        """End a conversation and its tip; False if it had already ended (the first reason stays)."""
        return await self._db.run_write(
            lambda conn: conversations.end_conversation(conn, conversation_id, reason)
        )

    async def live_conversation(self, session_key: str) -> ConversationRecord | None:
        return await self._db.run_read(lambda conn: conversations.live_conversation(conn, session_key))

    async def get_conversation(self, conversation_id: str) -> ConversationRecord | None:
        return await self._db.run_read(lambda conn: conversations.get_conversation(conn, conversation_id))

    # -- segments and the compression chain ----------------------------------------------------

    async def get_segment(self, segment_id: str) -> SegmentRecord | None:
        return await self._db.run_read(lambda conn: conversations.get_segment(conn, segment_id))

    async def segments(self, conversation_id: str) -> list[SegmentRecord]:
        """Every segment of the conversation, oldest first."""
        return await self._db.run_read(lambda conn: conversations.segments(conn, conversation_id))

    async def resolve_tip(self, segment_or_conversation_id: str) -> SegmentRecord:
        """The tip segment of the conversation that a segment id or conversation id belongs to."""
        return await self._db.run_read(lambda conn: chain.resolve_tip(conn, segment_or_conversation_id))

    async def lineage(self, segment_or_conversation_id: str) -> list[SegmentRecord]:
        """The conversation's segments, root first, tip last."""
        return await self._db.run_read(lambda conn: chain.lineage(conn, segment_or_conversation_id))

    async def freeze_system_prompt(self, segment_id: str, prompt: str) -> str:
        """Freeze ``prompt`` on the segment unless another call already did; the frozen prompt."""
        return await self._db.run_write(
            lambda conn: conversations.freeze_system_prompt(conn, segment_id, prompt)
        )

    async def add_usage(self, segment_id: str, usage: ModelCall) -> None:
        await self._db.run_write(lambda conn: conversations.add_usage(conn, segment_id, usage))

    async def compress(
        self,
        parent_segment_id: str,
        child: NewSegment,
        messages: Sequence[NewMessage],
        *,
        seen: Collection[int] | None = None,
    ) -> CompressionResult:
        """Atomically end ``parent_segment_id`` and start its child with ``messages``; see chain.compress."""
        prepared = [message_rows.prepare(m) for m in messages]
        return await self._db.run_write(
            lambda conn: chain.compress(conn, parent_segment_id, child, prepared, seen)
        )

    # -- messages ------------------------------------------------------------------------------

    async def append_messages(
        self, segment_id: str, messages: Sequence[NewMessage], usage: ModelCall | None = None
    ) -> list[int]:
        """Persist one step's messages (and its model call's ``usage``) in one transaction; their ids.

        The usage goes to ``segment_id`` (the model call ran on it) even when the rows land in the tip.
        """
        prepared = [message_rows.prepare(m) for m in messages]

        return await self._db.run_write(
            lambda conn: message_rows.insert_messages(conn, segment_id, prepared, usage)
        )

    async def append_message(self, segment_id: str, message: NewMessage) -> int:
        (message_id,) = await self.append_messages(segment_id, [message])
        return message_id

    async def set_api_content(self, message_id: int, api_content: str | None) -> None:
        """Store the exact text sent to the model for a message when it differs from its content."""
        cleaned = message_rows.clean_text(api_content)
        await self._db.run_write(lambda conn: message_rows.set_api_content(conn, message_id, cleaned))

    async def segment_messages(self, segment_id: str) -> list[MessageRecord]:
        return await self._db.run_read(lambda conn: message_rows.segment_messages(conn, segment_id))

    async def conversation_messages(self, conversation_id: str) -> list[MessageRecord]:
        return await self._db.run_read(lambda conn: message_rows.conversation_messages(conn, conversation_id))

    async def tip_history(self, segment_or_conversation_id: str) -> SegmentHistory:
        """The conversation's tip segment and its messages, in one read."""
        return await self._db.run_read(lambda conn: chain.tip_history(conn, segment_or_conversation_id))

    # -- memory audit --------------------------------------------------------------------------

    async def record_memory_audit(
        self,
        *,
        actor: Actor,
        store: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
    ) -> None:
        """Record one curated-memory write (the MemoryAuditSink protocol of agent_core.memory)."""
        await self._db.run_write(
            lambda conn: audit.record_memory_audit(
                conn,
                person_id=actor.person_id,
                conversation_id=actor.conversation_id,
                actor=actor.label,
                store=store,
                action=action,
                old_text=old_text,
                new_text=new_text,
            )
        )

    async def memory_audit(self, person_id: str, *, limit: int = 100) -> list[MemoryAuditRecord]:
        """The person's memory audit records, newest first."""
        return await self._db.run_read(lambda conn: audit.memory_audit(conn, person_id, limit))

    # -- forgetting ----------------------------------------------------------------------------

    async def forget_conversations(self, conversation_ids: Collection[str]) -> ForgottenConversations:
        """Delete the conversations with everything derived from them (agent_core.storage.forgetting)."""
        ids = tuple(dict.fromkeys(conversation_ids))
        if not ids:
            return ForgottenConversations()
        return await self._db.run_write(lambda conn: forget.delete_conversations(conn, ids))

    async def forget_authored_turns(self, person_id: str) -> int:
        """Delete the person's remaining user messages with their turns (agent_core.storage.forgetting)."""
        return await self._db.run_write(lambda conn: forget.delete_authored_turns(conn, person_id))

    async def forget_memory_audit_texts(self, person_id: str) -> int:
        """Blank the texts of the person's memory audit records."""
        return await self._db.run_write(lambda conn: forget.blank_audit_texts(conn, person_id))

    # -- compression cooldowns -----------------------------------------------------------------

    async def compression_cooldown(self, conversation_id: str) -> CompressionCooldown | None:
        return await self._db.run_read(lambda conn: audit.get_cooldown(conn, conversation_id))

    async def put_compression_cooldown(self, conversation_id: str, cooldown: CompressionCooldown) -> None:
        """Replace the conversation's cooldown and sweep outdated ones, in one transaction."""
        await self._db.run_write(lambda conn: audit.put_cooldown(conn, conversation_id, cooldown))

    async def clear_compression_cooldown(self, conversation_id: str) -> None:
        await self._db.run_write(lambda conn: audit.clear_cooldown(conn, conversation_id))
