"""The ``honcho`` provider, through the official ``honcho-ai`` SDK (imported only when configured).

Invariants: the person and the agent are two Honcho peers (the person's peer id is derived from the
person id only, so two people never share one); each conversation is one Honcho session with both
peers; ``sync_turn`` adds exactly the exchange's two messages to that conversation's session; recall is
the session context's view of the PERSON peer (peer card + representation), never another peer's.
"""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import MemoryProvider, ProviderContext
from .settings import HonchoProviderSettings

if TYPE_CHECKING:
    from honcho import Honcho  # type: ignore[import-untyped, import-not-found, unused-ignore]

_SESSION_CACHE = 256
_MAX_CONCLUSION_PAGES = 1000


class HonchoProvider(MemoryProvider):
    name = "honcho"

    def __init__(self, settings: HonchoProviderSettings) -> None:
        self._settings = settings
        self._client: Honcho | None = None
        # Peers and sessions are get-or-create on the server; caching them saves a round trip per call.
        self._sessions: OrderedDict[str, Any] = OrderedDict()
        self._peers: dict[str, Any] = {}

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("honcho") is None:
            return "the honcho-ai package is not installed (pip install 'mnemogate[providers]')"
        if self._settings.api_key is None:
            return "HONCHO_API_KEY is not set"
        return None

    async def initialize(self) -> None:
        from honcho import Honcho  # type: ignore[import-untyped, import-not-found, unused-ignore]

        key = self._settings.api_key
        # Retries are the breaker's job; the SDK's own would multiply the timeout.
        self._client = Honcho(
            api_key=key.get_secret_value() if key is not None else None,
            base_url=self._settings.base_url,
            workspace_id=self._settings.workspace_id,
            timeout=self._settings.request_timeout_s,
            max_retries=0,
        )

    def person_peer_id(self, person_id: str) -> str:
        return f"{self._settings.person_peer_prefix}{person_id}"

    async def prefetch(self, ctx: ProviderContext, query: str) -> str | None:
        session = await self._session(ctx)
        context = await session.aio.context(
            summary=False,
            tokens=self._settings.context_tokens,
            peer_target=self.person_peer_id(ctx.person_id),
            search_query=query.strip() or None,
        )
        parts: list[str] = []
        if context.peer_card:
            parts.append(
                "## What is known about this person\n" + "\n".join(f"- {c}" for c in context.peer_card)
            )
        if context.peer_representation:
            parts.append(context.peer_representation.strip())
        return "\n\n".join(parts) or None

    async def sync_turn(self, ctx: ProviderContext, user: str, assistant: str) -> None:
        session = await self._session(ctx)
        person = await self._peer(self.person_peer_id(ctx.person_id))
        agent = await self._peer(self._settings.agent_peer_id)
        await session.aio.add_messages([person.message(user), agent.message(assistant)])

    async def on_session_end(self, ctx: ProviderContext) -> None:
        self._sessions.pop(ctx.conversation_id, None)

    async def forget_person(self, person_id: str, conversation_ids: Sequence[str]) -> None:
        """Delete the Honcho session of each of the person's conversations (its messages with it), every
        conclusion Honcho derived about the person's peer (page by page, a bounded number), and empty the
        peer cards about them: the peer's own and the agent peer's card of it."""
        client = self._require()
        for conversation_id in conversation_ids:
            self._sessions.pop(conversation_id, None)
            session = await client.aio.session(conversation_id)
            await session.aio.delete()
        peer_id = self.person_peer_id(person_id)
        peer = await self._peer(peer_id)
        await self._forget_conclusions(peer_id, peer.conclusions)
        await peer.aio.set_card([])
        agent = await self._peer(self._settings.agent_peer_id)
        await agent.aio.set_card([], target=peer_id)

    async def _forget_conclusions(self, peer_id: str, view: Any) -> None:
        client = self._require()
        for _ in range(_MAX_CONCLUSION_PAGES):
            page = await client.aio.conclusions.list(filters={"observed_id": peer_id})
            if not page.items:
                return
            for conclusion in page.items:
                await view.aio.delete(conclusion.id)
        raise RuntimeError(f"honcho still lists conclusions about {peer_id} after erasing")

    async def _peer(self, peer_id: str) -> Any:
        peer = self._peers.get(peer_id)
        if peer is None:
            peer = await self._require().aio.peer(peer_id)
            if len(self._peers) >= _SESSION_CACHE:
                self._peers.clear()
            self._peers[peer_id] = peer
        return peer

    async def _session(self, ctx: ProviderContext) -> Any:
        session = self._sessions.get(ctx.conversation_id)
        if session is not None:
            self._sessions.move_to_end(ctx.conversation_id)
            return session
        peers = [self.person_peer_id(ctx.person_id), self._settings.agent_peer_id]
        session = await self._require().aio.session(
            ctx.conversation_id, peers=peers, metadata={"platform": ctx.platform}
        )
        self._sessions[ctx.conversation_id] = session
        while len(self._sessions) > _SESSION_CACHE:
            self._sessions.popitem(last=False)
        return session

    def _require(self) -> Honcho:
        if self._client is None:
            raise RuntimeError("the honcho provider was used before initialize()")
        return self._client
