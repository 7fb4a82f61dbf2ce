"""What the person in a web chat may read and change of their own: the chat's conversations, their search,
and their curated memory (USER.md / MEMORY.md).

Invariants: everything is scoped by the browser's chat (its session-key prefix) or its person, resolved
from the browser's account — a browser the gateway never admitted has no person, so it sees nothing and
changes nothing; search results are only the conversations of this chat; a memory change goes through
``MemoryStores`` as an ``Actor`` labelled ``user:web`` — the same threat scan, lock and audit as the
model's tool writes — and can never touch the global store; opening an older conversation first stops the
running turn of the live one (as ``/new`` does) and tells the memory providers that conversation ended.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_core.actor import Actor
from agent_core.memory import MemoryResult, MemoryStores, StoreView, Target
from agent_core.search import SearchScope, SessionSearch
from gateway.sessions import KeyScope, SessionKey
from gateway.storage.chat_conversations import ChatConversation, ChatConversations, ChatWindow, Reopened
from gateway.storage.identity import IdentityRepository
from gateway.storage.queue import TurnQueueRepository

PERSON_TARGETS = (Target.USER, Target.MEMORY)
"""The stores a person sees and edits here; the global one is the operator's."""


@dataclass(frozen=True)
class FoundConversation:
    """A search hit in one of this chat's conversations, with excerpts around the matches."""

    conversation: ChatConversation
    excerpts: tuple[str, ...]


@dataclass
class PersonServices:
    """The web chat's person-facing reads and writes over the storage ports and memory."""

    platform: str
    chats: ChatConversations
    identity: IdentityRepository
    memory: MemoryStores | None = None
    search: SessionSearch | None = None
    queue: TurnQueueRepository | None = None
    conversation_ended: Callable[[str, str, str], None] | None = None

    def key_prefix(self, chat_id: str) -> str:
        """Every session key of this browser's chat starts with this (whatever per-user parts follow)."""
        key = SessionKey(platform=self.platform, scope=KeyScope.DM, chat_id=chat_id).to_string()
        return key.rsplit(":", 2)[0] + ":"

    async def person(self, chat_id: str) -> str | None:
        return await self.identity.account_person(self.platform, chat_id)

    async def conversations(self, chat_id: str) -> tuple[ChatConversation, ...]:
        return await self.chats.conversations(self.key_prefix(chat_id))

    async def window(self, chat_id: str, chat_ref: str, limit: int) -> ChatWindow:
        return await self.chats.window(self.key_prefix(chat_id), chat_ref, limit=limit)

    async def rename(self, chat_id: str, conversation_id: str, title: str | None) -> bool:
        return await self.chats.rename(self.key_prefix(chat_id), conversation_id, title)

    async def open(self, chat_id: str, conversation_id: str) -> Reopened | None:
        """Continue ``conversation_id``: the chat's running turn stops, and it becomes the live one."""
        prefix = self.key_prefix(chat_id)
        if self.queue is not None:
            live = SessionKey(platform=self.platform, scope=KeyScope.DM, chat_id=chat_id).to_string()
            await self.queue.stop_live(live)
        reopened = await self.chats.reopen(prefix, conversation_id)
        person = await self.person(chat_id)
        if reopened is not None and reopened.ended and person and self.conversation_ended is not None:
            self.conversation_ended(person, reopened.ended, self.platform)
        return reopened

    async def find(self, chat_id: str, query: str, limit: int = 10) -> tuple[FoundConversation, ...]:
        """This chat's conversations that match ``query`` best first (none without a person or search)."""
        person = await self.person(chat_id)
        if person is None or self.search is None:
            return ()
        mine = {c.id: c for c in await self.chats.conversations(self.key_prefix(chat_id), limit=500)}
        results = await self.search.search(query, SearchScope.person(person), limit=limit, summarise=False)
        return tuple(
            FoundConversation(mine[r.conversation_id], tuple(s.text for s in r.snippets if not s.untrusted))
            for r in results.conversations
            if r.conversation_id in mine
        )

    async def remembered(self, chat_id: str) -> tuple[StoreView, ...]:
        """The person's USER.md and MEMORY.md as they are now (empty without a person)."""
        person = await self.person(chat_id)
        if person is None or self.memory is None:
            return ()
        return tuple([await self.memory.entries(person_id=person, target=t) for t in PERSON_TARGETS])

    async def forget(self, chat_id: str, target: Target, entry: str) -> MemoryResult | None:
        """Remove exactly ``entry`` from one of the person's stores (None without a person)."""
        actor = await self._writer(chat_id)
        if actor is None or self.memory is None:
            return None
        return await self.memory.remove(actor, target=target, old_text=entry)

    async def rewrite(self, chat_id: str, target: Target, entry: str, content: str) -> MemoryResult | None:
        """Replace exactly ``entry`` by ``content`` (scanned like any write; None without a person)."""
        actor = await self._writer(chat_id)
        if actor is None or self.memory is None:
            return None
        return await self.memory.replace(actor, target=target, old_text=entry, content=content)

    async def _writer(self, chat_id: str) -> Actor | None:
        person = await self.person(chat_id)
        if person is None:
            return None
        return Actor(person, platform=self.platform, account_id=chat_id, label=f"user:{self.platform}")
