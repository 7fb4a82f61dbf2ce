"""The async StateStore facade: typed coroutines over state.db, with all SQLite work in threads.

Invariants: every method is a typed coroutine (no attribute forwarding); the SQLite work runs on the
store's threads (see workers.py), so the event loop never blocks on SQLite. A cancelled call may still
complete in its thread (treat its outcome as unknown). Opening refuses a damaged state.db (integrity.py);
damage met later by any call or by the indexer is kept, so ``check_readable`` fails until a restart.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from agent_core.actor import Actor

from ..audit import MemoryAuditRecord
from ..cooldowns import CompressionCooldown
from ..errors import SearchIndexUnavailableError, StateUnavailableError
from ..forgetting import ForgottenConversations
from ..health import SearchHealth
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
    StoreStats,
)
from ..search_index import FoundMessage, SearchRequest, SearchScope, SearchSnapshot
from ..search_windows import Embedder, SemanticStatus
from . import chain, conversations, fts_query, search_index
from .cooldowns import clear_cooldown, get_cooldown, put_cooldown
from .engine import StorePaths
from .forget import blank_audit_texts, delete_authored_turns, delete_conversations
from .fts_query import FtsHit, FtsIndexName
from .integrity import check_at_start
from .messages import clean_text, conversation_messages, prepare, set_api_content
from .messages import segment_messages as read_segment_messages
from .schema import Ladder
from .semantic_reads import VectorCache, semantic_counts
from .settings import StateSettings
from .sidecar import committed_watermark, open_sidecar
from .window_store import forget_vectors
from .workers import StoreWorkers

T = TypeVar("T")
_LOG = logging.getLogger("agent_core.storage.sqlite")


class StateStore:
    """state.db for one home directory; use ``async with StateStore(home) as store``.

    Implements the agent's storage port (``agent_core.storage.AgentStorage``) and the ``SearchIndex``.
    """

    def __init__(
        self,
        home: Path,
        settings: StateSettings | None = None,
        *,
        ladders: Sequence[Ladder] = (),
        embedder: Embedder | None = None,
    ) -> None:
        """``ladders``: the schemas of other owners' tables in state.db, applied after the agent's.
        ``embedder``: the model that gives search windows their vectors (None: lexical search only)."""
        self._settings = settings or StateSettings()
        self.paths = StorePaths.for_home(home, self._settings)
        self._workers = StoreWorkers(self.paths, self._settings, ladders, embedder)
        self._embedder = embedder
        self._vectors = VectorCache(embedder.model_id, embedder.dim) if embedder is not None else None
        self._damage: StateUnavailableError | None = None

    async def __aenter__(self) -> StateStore:
        await self.open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self) -> None:
        """Open (creating or migrating) state.db; raises StateUnavailableError naming an unusable file.

        A state.db that is empty where the home holds data, unreadable, or failing its integrity check
        raises StateDamagedError instead of starting a new database (see integrity.py).
        """
        await asyncio.to_thread(check_at_start, self.paths, self._settings, _LOG)
        await self._workers.open()

    async def close(self) -> None:
        await self._workers.close()

    def stats(self) -> StoreStats:
        """Counters for metrics and health (write retries, commits, indexer state)."""
        return self._workers.stats()

    @property
    def write_retries(self) -> int:
        """How many write attempts found the database locked and were retried (a metrics counter)."""
        return self._workers.stats().write_retries

    async def check_writable(self) -> None:
        """Prove the write lock can be taken now (readiness); raises a StateError subclass if not."""
        await self._write(lambda c: None)

    async def check_readable(self) -> None:
        """Prove state.db reads work now (readiness); raises StateUnavailableError if not.

        Damage that any read, write or the indexer met since the store opened is raised again here: a
        corrupt page does not heal, and the next start-up check refuses the file.
        """
        indexer = self._workers.indexer
        damage = self._damage or (indexer.state_damage if indexer is not None else None)
        if damage is not None:
            # A new instance each time: re-raising one object would grow its traceback on every probe.
            raise StateUnavailableError(damage.path, damage.reason, damaged=True)
        await self._read(_probe_read)

    async def search_health(self) -> SearchHealth:
        """Whether search answers from a complete index now, is being rebuilt, or cannot answer."""
        indexer = self._workers.indexer
        failures = indexer.failures if indexer is not None else 0
        newest = await self._read(committed_watermark)
        try:
            indexed = await self._read(self._indexed_up_to, with_index=True)
        except SearchIndexUnavailableError as exc:
            return SearchHealth("unavailable", 0, newest, failures, detail=str(exc))
        rebuilding = indexer is not None and indexer.catching_up
        return SearchHealth.judge(indexed, newest, rebuilding=rebuilding, indexer_failures=failures)

    # -- conversations -------------------------------------------------------------------------

    async def ensure_conversation(
        self, session_key: str, principal: Principal, segment: NewSegment | None = None
    ) -> ConversationRecord:
        """The live conversation for ``session_key``, creating it with a first segment if needed."""
        spec = segment or NewSegment()
        record, _ = await self._write(
            lambda c: conversations.ensure_conversation(c, session_key, principal, spec, time.time())
        )
        return record

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
        return await self._write(
            lambda c: conversations.start_new_conversation(
                c, session_key, principal, spec, reason, time.time()
            )
        )

    async def end_conversation(self, conversation_id: str, reason: str) -> bool:
        """End a conversation and its tip; False if it had already ended."""
        return await self._write(
            lambda c: conversations.end_conversation(c, conversation_id, reason, time.time())
        )

    async def live_conversation(self, session_key: str) -> ConversationRecord | None:
        return await self._read(lambda c: conversations.live_conversation(c, session_key))

    async def get_conversation(self, conversation_id: str) -> ConversationRecord | None:
        return await self._read(lambda c: conversations.get_conversation(c, conversation_id))

    # -- segments and the compression chain ----------------------------------------------------

    async def get_segment(self, segment_id: str) -> SegmentRecord | None:
        return await self._read(lambda c: conversations.get_segment(c, segment_id))

    async def resolve_tip(self, segment_or_conversation_id: str) -> SegmentRecord:
        """The tip segment of the conversation that a segment id or conversation id belongs to."""
        return await self._read(lambda c: chain.resolve_tip(c, segment_or_conversation_id))

    async def lineage(self, segment_or_conversation_id: str) -> list[SegmentRecord]:
        """The conversation's segments, root first, tip last."""
        return await self._read(lambda c: chain.lineage(c, segment_or_conversation_id))

    async def segments(self, conversation_id: str) -> list[SegmentRecord]:
        """Every segment of the conversation, oldest first."""
        return await self._read(lambda c: conversations.segments(c, conversation_id))

    async def tip_history(self, segment_or_conversation_id: str) -> SegmentHistory:
        """The conversation's tip segment and its messages, in one read."""
        return await self._read(lambda c: chain.tip_history(c, segment_or_conversation_id))

    async def compress(
        self,
        parent_segment_id: str,
        child: NewSegment,
        messages: Sequence[NewMessage],
        *,
        seen: Collection[int] | None = None,
    ) -> CompressionResult:
        """Atomically end ``parent_segment_id`` and start its child with ``messages``; see chain.compress."""
        now = time.time()
        prepared = [prepare(m, now) for m in messages]
        return await self._watch(
            self._workers.write(
                lambda c: chain.compress(c, parent_segment_id, child, prepared, now, seen),
                notify_indexer=True,
            )
        )

    async def freeze_system_prompt(self, segment_id: str, prompt: str) -> str:
        """Freeze ``prompt`` on the segment unless another call already did; return the frozen prompt.

        Every process therefore uses the same bytes for the whole segment (the first writer wins).
        """
        return await self._write(lambda c: conversations.freeze_system_prompt(c, segment_id, prompt))

    async def add_usage(self, segment_id: str, usage: ModelCall) -> None:
        await self._write(lambda c: conversations.add_usage(c, segment_id, usage))

    # -- messages ------------------------------------------------------------------------------

    async def append_messages(
        self, segment_id: str, messages: Sequence[NewMessage], usage: ModelCall | None = None
    ) -> list[int]:
        """Persist one step's messages (and its model call's ``usage``) in one transaction; their ids."""
        return await self._watch(self._workers.append(segment_id, messages, usage))

    async def append_message(self, segment_id: str, message: NewMessage) -> int:
        (message_id,) = await self.append_messages(segment_id, [message])
        return message_id

    async def set_api_content(self, message_id: int, api_content: str | None) -> None:
        """Store the exact text sent to the model for a message when it differs from its content."""
        cleaned = clean_text(api_content)
        await self._write(lambda c: set_api_content(c, message_id, cleaned))

    async def segment_messages(self, segment_id: str) -> list[MessageRecord]:
        return await self._read(lambda c: read_segment_messages(c, segment_id))

    async def conversation_messages(self, conversation_id: str) -> list[MessageRecord]:
        return await self._read(lambda c: conversation_messages(c, conversation_id))

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
        await self._write(
            lambda c: conversations.record_memory_audit(
                c,
                at=time.time(),
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
        return await self._read(lambda c: conversations.memory_audit(c, person_id, limit))

    # -- forgetting ----------------------------------------------------------------------------

    async def forget_conversations(self, conversation_ids: Collection[str]) -> ForgottenConversations:
        """Delete the conversations with everything derived from them (agent_core.storage.forgetting)."""
        ids = tuple(dict.fromkeys(conversation_ids))
        if not ids:
            return ForgottenConversations()
        return await self._watch(self._workers.forget(lambda c: delete_conversations(c, ids)))

    async def forget_authored_turns(self, person_id: str) -> int:
        """Delete the person's remaining user messages with their turns (agent_core.storage.forgetting)."""
        forgotten = await self._watch(self._workers.forget(lambda c: delete_authored_turns(c, person_id)))
        return forgotten.messages

    async def forget_memory_audit_texts(self, person_id: str) -> int:
        """Blank the texts of the person's memory audit records, then empty the WAL that held them."""
        blanked = await self._write(lambda c: blank_audit_texts(c, person_id))
        await self.truncate_wal()
        return blanked

    async def truncate_wal(self) -> bool:
        """Empty state.db's WAL now, after deletions whose old text its frames still hold (False: readers
        kept it busy; the checkpointer empties it later)."""
        return await self._watch(self._workers.truncate_wal())

    # -- compression cooldowns -----------------------------------------------------------------

    async def compression_cooldown(self, conversation_id: str) -> CompressionCooldown | None:
        return await self._read(lambda c: get_cooldown(c, conversation_id))

    async def put_compression_cooldown(self, conversation_id: str, cooldown: CompressionCooldown) -> None:
        """Replace the conversation's cooldown and sweep outdated ones, in one transaction."""
        await self._write(lambda c: put_cooldown(c, conversation_id, cooldown))

    async def clear_compression_cooldown(self, conversation_id: str) -> None:
        await self._write(lambda c: clear_cooldown(c, conversation_id))

    # -- full-text search: the SearchIndex port (fts_* take ready-made FTS5 syntax, for backend tests) --

    async def search_messages(self, request: SearchRequest) -> SearchSnapshot:
        """The visible messages matching the planned query in its scope, best first (SearchIndex)."""
        vectors = self._vectors
        return await self._read(lambda c: search_index.search_messages(c, request, vectors), with_index=True)

    async def participants(self, scope: SearchScope, words: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
        """Per word of ``words`` naming a speaker, the conversations in ``scope`` where they speak."""
        if not words:
            return {}
        return await self._read(lambda c: search_index.scoped_participants(c, scope, words), with_index=True)

    async def semantic_status(self) -> SemanticStatus:
        """How many windows exist and how many carry a vector of this store's model."""
        if self._embedder is None:
            return SemanticStatus("off", detail="no embedding model configured")
        model_id = self._embedder.model_id
        try:
            return await self._read(lambda c: semantic_counts(c, model_id), with_index=True)
        except SearchIndexUnavailableError as exc:
            return SemanticStatus("building", model_id=model_id, detail=str(exc))

    async def rebuild_semantic(self) -> None:
        """Forget every stored vector; the embedder (of whichever process holds its lock) embeds again."""

        def forget() -> None:
            conn = open_sidecar(self.paths.sidecar, busy_timeout_ms=max(self._settings.busy_timeout_ms, 2000))
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    forget_vectors(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            finally:
                conn.close()

        await asyncio.to_thread(forget)
        embedder = self._workers.embedder
        if embedder is not None:
            embedder.notify()

    @property
    def embedding_rate(self) -> float:
        """Windows this process embedded per second of model time (0 when it embedded none)."""
        embedder = self._workers.embedder
        return embedder.windows_per_s if embedder is not None else 0.0

    async def message_windows(
        self, anchors: Mapping[str, Sequence[int]], *, around: int
    ) -> dict[str, list[FoundMessage]]:
        """Per conversation, its messages within ``around`` positions of the anchor ids, in one read."""
        return await self._read(lambda c: search_index.windows(c, anchors, around))

    async def fts_match(
        self,
        porter: str | None,
        trigram: str | None,
        *,
        limit: int,
        conversation_ids: Sequence[str] | None = None,
    ) -> list[FtsHit]:
        """Run ready-made MATCH expressions on the porter and/or trigram index; best (lowest) score first."""
        scope = self._settings.trigram_scope
        return await self._read(
            lambda c: fts_query.fts_match(
                c, porter, trigram, limit=limit, conversation_ids=conversation_ids, scope=scope
            ),
            with_index=True,
        )

    async def fts_vocabulary(
        self, index: FtsIndexName, low: str, high: str, *, limit: int
    ) -> list[tuple[str, int]]:
        """Terms of one index in ``[low, high)`` with their document counts, most common first."""
        scope = self._settings.trigram_scope
        return await self._read(
            lambda c: fts_query.vocabulary(c, index, low, high, limit, scope), with_index=True
        )

    async def fts_count(self, index: FtsIndexName, expression: str, *, cap: int) -> int:
        """How many messages match ``expression`` on one index, counting at most ``cap``."""
        scope = self._settings.trigram_scope
        return await self._read(
            lambda c: fts_query.count_matches(c, index, expression, cap, scope), with_index=True
        )

    async def message_count(self) -> int:
        """How many messages state.db holds (the document total for frequency decisions)."""
        return await self._read(fts_query.message_count)

    async def index_position(self) -> int:
        """The id of the newest message the search index covers (0 while it is empty or rebuilding)."""
        try:
            return await self._read(self._indexed_up_to, with_index=True)
        except SearchIndexUnavailableError:
            return 0

    async def index_lag(self) -> int:
        """How many messages are not yet in the search index."""
        try:
            scope = self._settings.trigram_scope
            return await self._read(lambda c: fts_query.unindexed_count(c, scope), with_index=True)
        except SearchIndexUnavailableError:
            return await self._read(fts_query.message_count)

    async def wait_indexed(self, timeout: float) -> bool:  # noqa: ASYNC109 - a deadline, not a cancel
        """Wait until every message committed before this call is searchable; False on timeout."""
        deadline = time.monotonic() + timeout
        target = await self._read(committed_watermark)
        while True:
            try:
                if await self._read(self._indexed_up_to, with_index=True) >= target:
                    return True
            except SearchIndexUnavailableError:
                pass
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            await asyncio.sleep(min(0.01, remaining))

    # -- extension point: queries owned by other modules of this package -----------------------

    async def run_read(self, fn: Callable[[sqlite3.Connection], T], *, with_index: bool = False) -> T:
        """Run ``fn`` on a reader connection (``with_index``: the search sidecar is attached as ``idx``)."""
        return await self._read(fn, with_index=with_index)

    async def run_write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` inside one short ``BEGIN IMMEDIATE`` write transaction, with the store's retries."""
        return await self._write(fn)

    # -- plumbing ------------------------------------------------------------------------------

    def _indexed_up_to(self, conn: sqlite3.Connection) -> int:
        return fts_query.indexed_up_to(conn, self._settings.trigram_scope)

    async def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._watch(self._workers.write(fn))

    async def _read(self, fn: Callable[[sqlite3.Connection], T], *, with_index: bool = False) -> T:
        return await self._watch(self._workers.read(fn, with_index=with_index))

    async def _watch(self, call: Awaitable[T]) -> T:
        """Await ``call``, keeping the first damage it reveals for ``check_readable``."""
        try:
            return await call
        except StateUnavailableError as exc:
            if exc.damaged and self._damage is None:
                self._damage = exc
            raise


def _probe_read(conn: sqlite3.Connection) -> None:
    """A cheap read through the reader pool: the schema identity and the newest message's page."""
    conn.execute("SELECT value FROM meta WHERE key = 'db_uuid'").fetchone()
    conn.execute("SELECT id, length(content) FROM messages ORDER BY id DESC LIMIT 1").fetchone()
