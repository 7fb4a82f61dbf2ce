"""The ``mem0`` provider, through the official ``mem0ai`` platform client (imported only when configured).

Invariants: every add and search is scoped by ``user_id`` = the person id (search via
``filters={"user_id": ...}``), so one person's memories never answer another's query; the conversation
id travels as metadata on adds (a ``run_id`` would narrow memories to one conversation); the SDK's
telemetry is switched off unless enabled in config (a self-hosted gateway does not phone home); the
client's blocking key check runs in a thread.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import MemoryProvider, ProviderContext
from .settings import Mem0ProviderSettings

if TYPE_CHECKING:
    from mem0 import AsyncMemoryClient  # type: ignore[import-untyped, import-not-found, unused-ignore]

HEADER = "## Memories about this person"


class Mem0Provider(MemoryProvider):
    name = "mem0"

    def __init__(self, settings: Mem0ProviderSettings) -> None:
        self._settings = settings
        self._client: AsyncMemoryClient | None = None

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("mem0") is None:
            return "the mem0ai package is not installed (pip install 'mnemogate[providers]')"
        if self._settings.api_key is None:
            return "MEM0_API_KEY is not set"
        return None

    async def initialize(self) -> None:
        from mem0 import AsyncMemoryClient  # type: ignore[import-untyped, import-not-found, unused-ignore]
        from mem0.memory.telemetry import client_telemetry  # type: ignore[import-untyped, import-not-found, unused-ignore]

        if not self._settings.telemetry:
            client_telemetry.close()
        key = self._settings.api_key
        secret = key.get_secret_value() if key is not None else None
        # The constructor pings the API with a blocking request: keep it off the event loop.
        self._client = await asyncio.to_thread(AsyncMemoryClient, api_key=secret, host=self._settings.host)

    async def prefetch(self, ctx: ProviderContext, query: str) -> str | None:
        if not query.strip():
            return None
        found = await self._require().search(
            query, filters={"user_id": ctx.person_id}, top_k=self._settings.top_k
        )
        memories = [str(item.get("memory", "")).strip() for item in _results(found)]
        lines = [f"- {m}" for m in memories if m]
        return "\n".join([HEADER, *lines]) if lines else None

    async def sync_turn(self, ctx: ProviderContext, user: str, assistant: str) -> None:
        messages = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        await self._require().add(
            messages,
            user_id=ctx.person_id,
            metadata={
                "conversation_id": ctx.conversation_id,
                "platform": ctx.platform,
                "agent": self._settings.agent_id,
            },
        )

    async def forget_person(self, person_id: str, conversation_ids: Sequence[str]) -> None:
        """Mem0's delete-all for the person's ``user_id`` (every memory it extracted for them)."""
        await self._require().delete_all(user_id=person_id)

    async def shutdown(self) -> None:
        if self._client is not None:
            await self._client.async_client.aclose()
            self._client = None

    def _require(self) -> AsyncMemoryClient:
        if self._client is None:
            raise RuntimeError("the mem0 provider was used before initialize()")
        return self._client


def _results(payload: Any) -> list[dict[str, Any]]:
    items = payload.get("results", []) if isinstance(payload, dict) else payload
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
