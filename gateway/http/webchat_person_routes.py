"""The web chat's person-facing JSON API: this browser's conversations (list, open, rename, search) and
"what I remember about you" (the person's USER.md / MEMORY.md entries: read, delete, edit).

Every route acts for the browser's chat id (its cookie's keyed hash) and nothing else
(``gateway.webchat.person_services``); a conversation of another chat answers 404 exactly like one that
does not exist, and a memory write that the threat scan or the limits refuse answers 422 with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import BaseModel, Field

from agent_core.memory import MemoryResult, StoreView, Target
from gateway.storage.chat_conversations import TITLE_MAX, ChatConversation
from gateway.webchat.person_services import PersonServices

ChatIdOf = Callable[[Request, Response], str]
_UNTITLED = "New chat"
_TITLE_FROM_TEXT = 60
_STORE_LABELS = {Target.USER: "About you", Target.MEMORY: "Notes I keep"}


class Rename(BaseModel):
    title: str = Field(max_length=TITLE_MAX * 2)


class EntryChange(BaseModel):
    target: Target
    entry: str = Field(min_length=1, max_length=10_000)
    content: str | None = Field(default=None, max_length=10_000)


def conversation_json(conversation: ChatConversation) -> dict[str, object]:
    """A conversation as the sidebar shows it: its title, or the start of its first message."""
    first = " ".join((conversation.first_message or "").split())
    derived = first[:_TITLE_FROM_TEXT] + ("…" if len(first) > _TITLE_FROM_TEXT else "")
    return {
        "id": conversation.id,
        "title": conversation.title or derived or _UNTITLED,
        "renamed": conversation.title is not None,
        "live": conversation.live,
        "created_at": conversation.created_at,
        "last_active_at": conversation.last_active_at,
        "user_messages": conversation.user_messages,
    }


def _store_json(view: StoreView) -> dict[str, object]:
    usage = view.usage
    return {
        "target": usage.target.value,
        "label": _STORE_LABELS.get(usage.target, usage.target.value),
        "used": usage.used,
        "limit": usage.limit,
        "percent": usage.percent,
        "entries": list(view.entries),
    }


def _written(result: MemoryResult | None) -> dict[str, object]:
    if result is None:
        raise HTTPException(404, "Nothing is remembered about you yet.")
    if not result.success:
        raise HTTPException(422, result.error or "The change was refused.")
    return {"ok": True, "usage": result.usage}


def person_router(people: PersonServices, chat_id_of: ChatIdOf) -> APIRouter:
    """The routes, each resolving the browser's chat id with ``chat_id_of`` (which may set the cookie)."""
    router = APIRouter(prefix="/api/chat")

    @router.get("/conversations")
    async def conversations(request: Request, response: Response) -> dict[str, object]:
        found = await people.conversations(chat_id_of(request, response))
        return {"conversations": [conversation_json(c) for c in found]}

    @router.post("/conversations/{conversation_id}/open")
    async def open_conversation(conversation_id: str, request: Request, response: Response) -> dict[str, str]:
        reopened = await people.open(chat_id_of(request, response), conversation_id)
        if reopened is None:
            raise HTTPException(404, "No such conversation in this chat.")
        return {"conversation_id": reopened.conversation_id}

    @router.patch("/conversations/{conversation_id}")
    async def rename(
        conversation_id: str, body: Rename, request: Request, response: Response
    ) -> dict[str, bool]:
        if not await people.rename(chat_id_of(request, response), conversation_id, body.title):
            raise HTTPException(404, "No such conversation in this chat.")
        return {"ok": True}

    @router.get("/search")
    async def search(request: Request, response: Response, q: str = "") -> dict[str, object]:
        query = q.strip()[:500]
        found = await people.find(chat_id_of(request, response), query) if query else ()
        return {
            "query": query,
            "results": [{**conversation_json(f.conversation), "excerpts": list(f.excerpts)} for f in found],
        }

    @router.get("/memory")
    async def memory(request: Request, response: Response) -> dict[str, object]:
        views = await people.remembered(chat_id_of(request, response))
        return {"stores": [_store_json(view) for view in views]}

    @router.post("/memory/forget")
    async def forget(body: EntryChange, request: Request, response: Response) -> dict[str, object]:
        _own(body.target)
        return _written(await people.forget(chat_id_of(request, response), body.target, body.entry))

    @router.post("/memory/rewrite")
    async def rewrite(body: EntryChange, request: Request, response: Response) -> dict[str, object]:
        _own(body.target)
        if not (body.content or "").strip():
            raise HTTPException(422, "The new text is empty; delete the entry instead.")
        chat_id = chat_id_of(request, response)
        return _written(await people.rewrite(chat_id, body.target, body.entry, body.content or ""))

    return router


def _own(target: Target) -> None:
    if target is Target.GLOBAL:
        raise HTTPException(403, "The global memory is the operator's.")
