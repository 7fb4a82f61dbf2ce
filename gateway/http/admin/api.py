"""The admin JSON API under ``/admin``: conversations, transcripts, search, persons, memory, pairing, audit.

Every route sits behind the ``BearerGuard`` (scripts send ``Authorization: Bearer <http.admin_token>``);
every error is one problem document (``problems.py``). Reads go through the ``AdminReads`` and
``ConsoleReads`` ports and the agent's storage (segments, reset, memory audit); memory edits go through
``MemoryStores`` as an operator ``Actor`` (admin, for the person edited) audited as "admin", so they are
threat-scanned, locked and recorded in the audit trail like any other write.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import BaseModel, Field

from agent_core.actor import Actor
from agent_core.memory import MemoryResult, MemoryStoreError
from agent_core.search import SearchScope
from agent_core.storage import EndReason, SearchIndexUnavailableError
from gateway.http.access import BearerGuard
from gateway.identity import PairingError
from gateway.storage.admin_reads import MAX_PAGE, ConversationRow, Page, PersonRow

from .backend import AdminBackend, PairingBook, operator
from .pages_support import console_reads
from .problems import AdminProblem

# Offsets and ids are 64-bit integers in every backend: a larger number is a 422, not an OverflowError (500).
_MAX_SQL_INT = 2**63 - 1
_FOREVER = 1e12  # epoch seconds far past any stored time (year 33658); bounds the date filters


class MemoryEdit(BaseModel):
    target: Literal["memory", "user", "global"] = "memory"
    action: Literal["add", "replace", "remove"]
    content: str | None = Field(default=None, max_length=10_000)
    old_text: str | None = Field(default=None, max_length=10_000)


def to_json(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if hasattr(value, "value") and isinstance(getattr(value, "value", None), str):
        return value.value
    return value


def _page(page: Page[Any]) -> dict[str, Any]:
    next_offset = page.offset + page.limit if page.offset + page.limit < page.total else None
    return {
        "items": to_json(page.rows),
        "total": page.total,
        "limit": page.limit,
        "offset": page.offset,
        "next_offset": next_offset,
    }


def admin_router(backend: AdminBackend, guard: BearerGuard) -> APIRouter:
    """The JSON API's routes (paths relative to the ``/admin`` mount)."""
    router = APIRouter(dependencies=[Depends(guard)], tags=["admin"])
    admin, agent = backend.reads, backend.agent
    memory, searcher = backend.memory, backend.search

    async def conversation_or_404(conversation_id: str) -> ConversationRow:
        row = await admin.conversation(conversation_id)
        if row is None:
            raise HTTPException(404, f"no conversation {conversation_id!r}")
        return row

    async def person_or_404(person_id: str) -> PersonRow:
        row = await admin.person(person_id)
        if row is None:
            raise HTTPException(404, f"no person {person_id!r}")
        return row

    @router.get("/conversations", summary="List conversations, newest first")
    async def conversations(
        platform: str | None = None,
        person: str | None = None,
        active: bool | None = None,
        since: float | None = Query(
            default=None, ge=0, le=_FOREVER, description="open at or after (epoch s)"
        ),
        until: float | None = Query(default=None, ge=0, le=_FOREVER, description="started before (epoch s)"),
        limit: int = Query(default=50, ge=1, le=MAX_PAGE),
        offset: int = Query(default=0, ge=0, le=_MAX_SQL_INT),
    ) -> dict[str, Any]:
        """Filters combine; `since` and `until` keep the conversations open at some time in [since, until)."""
        page = await admin.conversations(
            platform=platform,
            person_id=person,
            active=active,
            since=since,
            until=until,
            limit=limit,
            offset=offset,
        )
        return _page(page)

    @router.get("/conversations/{conversation_id}", summary="One conversation: segments, chain and usage")
    async def conversation(conversation_id: str) -> dict[str, Any]:
        row = await conversation_or_404(conversation_id)
        segments = await agent.lineage(conversation_id)
        totals = {
            "input_tokens": sum(s.usage.input_tokens for s in segments),
            "output_tokens": sum(s.usage.output_tokens for s in segments),
            "cache_read_tokens": sum(s.usage.cache_read_tokens for s in segments),
            "cache_write_tokens": sum(s.usage.cache_write_tokens for s in segments),
            "cost_usd": sum(s.usage.cost_usd for s in segments),
        }
        return {
            "conversation": to_json(row),
            "lineage": [s.id for s in segments],
            "segments": [
                {
                    "id": s.id,
                    "parent_session_id": s.parent_session_id,
                    "model": s.model,
                    "title": s.title,
                    "started_at": s.started_at,
                    "ended_at": s.ended_at,
                    "end_reason": s.end_reason,
                    "usage": to_json(s.usage),
                    "system_prompt_chars": len(s.system_prompt or ""),
                }
                for s in segments
            ],
            "usage": totals,
        }

    @router.get("/conversations/{conversation_id}/messages", summary="A conversation's messages, paged")
    async def messages(
        conversation_id: str,
        after: int = Query(default=0, ge=0, le=_MAX_SQL_INT),
        limit: int = Query(default=100, ge=1, le=MAX_PAGE),
    ) -> dict[str, Any]:
        await conversation_or_404(conversation_id)
        rows = await admin.messages(conversation_id, after_id=after, limit=limit)
        next_after = rows[-1].id if len(rows) == limit else None
        return {"items": to_json(rows), "next_after": next_after}

    @router.get(
        "/conversations/{conversation_id}/transcript",
        summary="A conversation's messages in full: tool calls with arguments, results, recall sidecar",
    )
    async def transcript(
        conversation_id: str,
        after: int = Query(default=0, ge=0, le=_MAX_SQL_INT),
        limit: int = Query(default=100, ge=1, le=MAX_PAGE),
    ) -> dict[str, Any]:
        await conversation_or_404(conversation_id)
        rows = await console_reads(backend).transcript(conversation_id, after_id=after, limit=limit)
        next_after = rows[-1].id if len(rows) == limit else None
        return {"items": to_json(rows), "next_after": next_after}

    @router.post("/conversations/{conversation_id}/reset", summary="End a conversation (reset)")
    async def reset(conversation_id: str) -> dict[str, Any]:
        await conversation_or_404(conversation_id)
        ended = await agent.end_conversation(conversation_id, EndReason.RESET)
        return {"conversation_id": conversation_id, "reset": ended}

    @router.get(
        "/search",
        summary="Search every conversation (or one person's): full text fused with semantic recall",
    )
    async def search(
        q: str = Query(min_length=1, max_length=500),
        person: str | None = None,
        limit: int = Query(default=20, ge=1, le=100),
    ) -> dict[str, Any]:
        scope = SearchScope.for_actor(Actor(person or "admin", is_admin=not person, label="admin"))
        try:
            results = await searcher.search(q, scope, limit=limit, summarise=False)
        except SearchIndexUnavailableError as exc:
            raise HTTPException(503, f"search index unavailable: {exc}") from exc
        found = [
            {
                "conversation_id": r.conversation_id,
                "score": r.score,
                "title": r.title,
                "platform": r.platform,
                "person_id": r.person_id,
                "started_at": r.started_at,
                "snippets": [{**s.to_dict(), "untrusted": s.untrusted} for s in r.snippets],
            }
            for r in results.conversations
        ]
        recall: dict[str, Any] = {"mode": results.mode, "note": results.note}
        return {"query": q, "truncated": results.query_truncated, "recall": recall, "conversations": found}

    @router.get("/persons", summary="List persons with their accounts, oldest first")
    async def persons(
        limit: int = Query(default=50, ge=1, le=MAX_PAGE),
        offset: int = Query(default=0, ge=0, le=_MAX_SQL_INT),
    ) -> dict[str, Any]:
        return _page(await admin.persons(limit=limit, offset=offset))

    @router.get("/persons/{person_id}/memory", summary="A person's memory stores and their audit trail")
    async def person_memory(person_id: str) -> dict[str, Any]:
        person = await person_or_404(person_id)
        try:
            views = await memory.show(person_id=person_id)
        except MemoryStoreError as exc:
            raise HTTPException(400, str(exc)) from exc
        audit = await agent.memory_audit(person_id)
        return {
            "person": to_json(person),
            "stores": [
                {
                    "target": v.usage.target.value,
                    "entries": list(v.entries),
                    "used": v.usage.used,
                    "limit": v.usage.limit,
                    "problem": v.usage.problem,
                }
                for v in views
            ],
            "audit": to_json(audit),
        }

    @router.put("/persons/{person_id}/memory", summary="Add, replace or remove a memory entry (audited)")
    async def edit_memory(person_id: str, edit: MemoryEdit) -> dict[str, Any]:
        await person_or_404(person_id)
        result = await apply_memory_edit(backend, operator(person_id, "admin"), edit)
        body: dict[str, Any] = dict(result.to_dict())
        if not body.get("success"):
            raise AdminProblem(422, str(body.get("error") or "the memory edit was refused"), result=body)
        return body

    @router.get("/audit", summary="The memory audit log (everyone's, or one person's), newest first")
    async def audit(
        person: str | None = None,
        limit: int = Query(default=50, ge=1, le=MAX_PAGE),
        offset: int = Query(default=0, ge=0, le=_MAX_SQL_INT),
    ) -> dict[str, Any]:
        return _page(await console_reads(backend).audit_log(person_id=person, limit=limit, offset=offset))

    @router.get("/pairing", summary="Pending DM pairing requests")
    async def pairing_list() -> dict[str, Any]:
        return {"pending": to_json(list(await pairing_book(backend).list_pending()))}

    @router.post("/pairing/{code}/{decision}", summary="Approve or deny a pairing request")
    async def pairing_decide(code: str, decision: Literal["approve", "deny"]) -> dict[str, Any]:
        book = pairing_book(backend)
        try:
            request = await (book.approve(code) if decision == "approve" else book.deny(code))
        except (PairingError, LookupError, ValueError) as exc:
            raise HTTPException(404, str(exc)) from exc
        return {"decision": decision, "request": to_json(request)}

    return router


async def apply_memory_edit(backend: AdminBackend, actor: Actor, edit: MemoryEdit) -> MemoryResult:
    """Apply ``edit`` as ``actor`` through the memory stores (scan, lock, audit); the store's result."""
    memory, target = backend.memory, edit.target
    try:
        if edit.action == "add":
            return await memory.add(actor, target=target, content=_required(edit.content, "content"))
        if edit.action == "replace":
            return await memory.replace(
                actor,
                target=target,
                old_text=_required(edit.old_text, "old_text"),
                content=_required(edit.content, "content"),
            )
        return await memory.remove(actor, target=target, old_text=_required(edit.old_text, "old_text"))
    except MemoryStoreError as exc:
        raise HTTPException(400, str(exc)) from exc


def _required(value: str | None, name: str) -> str:
    if not value:
        raise HTTPException(422, f"{name} is required for this action")
    return value


def pairing_book(backend: AdminBackend) -> PairingBook:
    if backend.pairing is None:
        raise HTTPException(404, "pairing is not enabled on this gateway")
    return backend.pairing
