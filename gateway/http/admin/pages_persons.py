"""The console's person pages: the paged list, and one person's accounts and ``/link`` history, model
usage and cost (this month, per day and per model), memory stores with usage meters, conversations and audit
trail; editing memory with a diff before saving.

Invariants: a console edit is applied by the same ``MemoryStores`` call a tool write makes, as an operator
``Actor`` for that person audited as ``admin:console`` — threat-scanned, locked, and recorded in the audit
trail with its old and new text; nothing is written before the operator confirmed the shown diff; an
entry is replaced by its full text as shown, so an entry changed meanwhile is refused, not overwritten.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from agent_core.memory import MemoryStoreError, StoreView
from gateway.storage.usage_reads import UsageGroup, UsageLine, UsageQuery, UsageReport
from gateway.usage import UsageCalendar

from .api import MemoryEdit, apply_memory_edit
from .backend import AdminBackend, operator
from .guards import CheckedForm, ConsoleForm, SignedIn
from .pages_support import Console, console_reads, see_other
from .rendering import PAGE_SIZE, Pager, page_offset
from .transcript_view import word_diff

CONSOLE_WRITER = "admin:console"
_SMALL_PAGE = 20
_TARGETS = ("memory", "user", "global")
_ACTIONS = ("add", "replace", "remove")
_USAGE_DAYS = 30


def person_routes(router: APIRouter, console: Console) -> None:
    backend = console.backend

    async def stores(person_id: str) -> tuple[StoreView, ...]:
        try:
            return await backend.memory.show(person_id=person_id)
        except MemoryStoreError as exc:
            raise HTTPException(400, f"This person's memory cannot be read: {exc}") from exc

    @router.get("/ui/persons", include_in_schema=False)
    async def persons(request: Request, session: SignedIn) -> Response:
        offset = page_offset(request)
        page = await backend.reads.persons(limit=PAGE_SIZE, offset=offset)
        pager = Pager.of(request, page.total, offset=offset)
        return console.render(request, "persons.html", session, page=page, pager=pager)

    @router.get("/ui/persons/{person_id}", include_in_schema=False)
    async def person(person_id: str, request: Request, session: SignedIn) -> Response:
        row = await console.person(person_id)
        reads = console_reads(backend)
        offset = page_offset(request)
        audit_offset = page_offset(request, "audit_offset")
        talks = await backend.reads.conversations(person_id=person_id, limit=_SMALL_PAGE, offset=offset)
        usage = await person_usage(backend, person_id, console.pages.clock.now)
        audit = await reads.audit_log(person_id=person_id, limit=_SMALL_PAGE, offset=audit_offset)
        return console.render(
            request,
            "person.html",
            session,
            row=row,
            usage=usage,
            links=await reads.link_history(person_id),
            stores=await stores(person_id),
            over_budget=await backend.budgets.holds(time.time(), person_id) if backend.budgets else [],
            talks=talks,
            talks_pager=Pager.of(request, talks.total, offset=offset, limit=_SMALL_PAGE),
            audit=[(record, word_diff(record.old_text, record.new_text)) for record in audit.rows],
            audit_pager=Pager.of(
                request, audit.total, offset=audit_offset, limit=_SMALL_PAGE, param="audit_offset"
            ),
            can_erase=backend.eraser is not None,
        )

    @router.get("/ui/persons/{person_id}/memory/edit", include_in_schema=False)
    async def edit(person_id: str, request: Request, session: SignedIn) -> Response:
        row = await console.person(person_id)
        target = _target(request.query_params.get("target", "memory"))
        view = _store(await stores(person_id), target)
        index_raw = request.query_params.get("i", "")
        entry = None
        if index_raw.isdigit():
            if int(index_raw) >= len(view.entries):
                raise HTTPException(404, "That memory entry is no longer there; reload the person's page.")
            entry = view.entries[int(index_raw)]
        return console.render(
            request, "memory_edit.html", session, row=row, target=target, view=view, old_text=entry,
            content=entry or "", preview=None, error=None, action="replace" if entry else "add",
        )  # fmt: skip

    @router.post("/ui/persons/{person_id}/memory/preview", include_in_schema=False)
    async def preview(person_id: str, request: Request, form: CheckedForm) -> Response:
        row = await console.person(person_id)
        edit = _edit(form)
        view = _store(await stores(person_id), edit.target)
        before = edit.old_text if edit.action != "add" else ""
        after = edit.content if edit.action != "remove" else ""
        return console.render(
            request, "memory_edit.html", form.session, row=row, target=edit.target, view=view,
            old_text=edit.old_text, content=edit.content or "", preview=word_diff(before, after), error=None,
            action=edit.action,
        )  # fmt: skip

    @router.post("/ui/persons/{person_id}/memory", include_in_schema=False)
    async def save(person_id: str, request: Request, form: CheckedForm) -> Response:
        row = await console.person(person_id)
        edit = _edit(form)
        result = await apply_memory_edit(backend, operator(person_id, CONSOLE_WRITER), edit)
        if result.success:
            return see_other(request, f"/ui/persons/{person_id}", "saved")
        view = _store(await stores(person_id), edit.target)
        return console.render(
            request, "memory_edit.html", form.session, status=422, row=row, target=edit.target, view=view,
            old_text=edit.old_text, content=edit.content or "", preview=None,
            error=result.error or "The memory store refused this change.", action=edit.action,
        )  # fmt: skip


@dataclass(frozen=True)
class PersonSpend:
    """What the person page shows of a person's spend: this month in total, per day over the last
    ``_USAGE_DAYS`` days, and per model this month."""

    zone: str
    month: UsageLine
    days: UsageReport
    models: UsageReport


async def person_usage(backend: AdminBackend, person_id: str, now: Callable[[], float]) -> PersonSpend | None:
    if backend.usage is None:
        return None
    zone = backend.usage_zone
    calendar = UsageCalendar(zone, now=now)
    month_start, month_end = calendar.this_month()
    since = calendar.parse(f"{_USAGE_DAYS}d")
    by_day = UsageQuery(since=since, group=UsageGroup.DAY, person_id=person_id, timezone=zone)
    by_model = UsageQuery(
        since=month_start, until=month_end, group=UsageGroup.MODEL, person_id=person_id, timezone=zone
    )
    days = await backend.usage.usage_report(by_day)
    models = await backend.usage.usage_report(by_model)
    return PersonSpend(zone, models.total, days, models)


def _store(views: tuple[StoreView, ...], target: str) -> StoreView:
    view = next((v for v in views if v.usage.target.value == target), None)
    if view is None:
        raise HTTPException(404, f"This deployment keeps no {target} memory for this person.")
    return view


def _target(value: str) -> Literal["memory", "user", "global"]:
    if value not in _TARGETS:
        raise HTTPException(400, "Unknown memory store: choose memory, user or global.")
    return cast(Literal["memory", "user", "global"], value)


def _edit(form: ConsoleForm) -> MemoryEdit:
    action = form.get("action")
    if action not in _ACTIONS:
        raise HTTPException(400, "Unknown memory action: choose add, replace or remove.")
    content = form.get("content").replace("\r\n", "\n").strip() or None
    old_text = form.get("old_text").replace("\r\n", "\n") or None
    if action != "remove" and not content:
        raise HTTPException(422, "Write the entry's new text first.")
    if action != "add" and not old_text:
        raise HTTPException(422, "Choose the entry to change from the person's page.")
    if len(content or "") > 10_000 or len(old_text or "") > 10_000:
        raise HTTPException(422, "A memory entry is at most 10,000 characters.")
    return MemoryEdit(
        target=_target(form.get("target", "memory")),
        action=cast(Literal["add", "replace", "remove"], action),
        content=content,
        old_text=old_text,
    )
