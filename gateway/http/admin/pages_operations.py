"""The console's operations pages: DM pairing requests (approve/deny) with recent decisions, skills (list and
view), the memory audit log of everyone, and replies that could not be delivered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from agent_core.skills import SkillError
from gateway.identity import PairingError

from .api import pairing_book
from .guards import CheckedForm, SignedIn
from .pages_support import Console, console_reads, see_other, skill_store
from .rendering import PAGE_SIZE, Pager, page_offset
from .transcript_view import word_diff

_DECISIONS = {"approve": "approved", "deny": "denied"}


def operations_routes(router: APIRouter, console: Console) -> None:
    backend = console.backend

    @router.get("/ui/pairing", include_in_schema=False)
    async def pairing(request: Request, session: SignedIn) -> Response:
        enabled = backend.pairing is not None
        requests: Sequence[Any] = await backend.pairing.list_requests() if backend.pairing else ()
        pending = [r for r in requests if str(getattr(r.state, "value", r.state)) == "pending"]
        decided = sorted(
            (r for r in requests if r not in pending), key=lambda r: r.decided_at or 0.0, reverse=True
        )
        offset = page_offset(request)
        return console.render(
            request, "pairing.html", session, enabled=enabled, pending=pending,
            decided=decided[offset : offset + PAGE_SIZE],
            pager=Pager.of(request, len(decided), offset=offset),
        )  # fmt: skip

    @router.post("/ui/pairing/{code}/{decision}", include_in_schema=False)
    async def decide(code: str, decision: str, request: Request, form: CheckedForm) -> Response:
        if decision not in _DECISIONS:
            raise HTTPException(404, "A pairing request is approved or denied, nothing else.")
        book = pairing_book(backend)
        try:
            await (book.approve(code) if decision == "approve" else book.deny(code))
        except (PairingError, LookupError, ValueError) as exc:
            raise HTTPException(404, f"No such pairing request: {exc}") from exc
        return see_other(request, "/ui/pairing", _DECISIONS[decision])

    @router.get("/ui/skills", include_in_schema=False)
    async def skills(request: Request, session: SignedIn) -> Response:
        listing = await skill_store(backend).list()
        offset = page_offset(request)
        return console.render(
            request, "skills.html", session, skills=listing.skills[offset : offset + PAGE_SIZE],
            problems=listing.problems, pager=Pager.of(request, len(listing.skills), offset=offset),
        )  # fmt: skip

    @router.get("/ui/skills/{name}", include_in_schema=False)
    async def skill(name: str, request: Request, session: SignedIn) -> Response:
        try:
            document = await skill_store(backend).view(name)
        except (SkillError, LookupError, ValueError) as exc:
            raise HTTPException(404, f"That skill cannot be shown: {exc}") from exc
        return console.render(request, "skill.html", session, skill=document)

    @router.get("/ui/audit", include_in_schema=False)
    async def audit(request: Request, session: SignedIn) -> Response:
        offset = page_offset(request)
        page = await console_reads(backend).audit_log(limit=PAGE_SIZE, offset=offset)
        return console.render(
            request, "audit.html", session, total=page.total,
            records=[(record, word_diff(record.old_text, record.new_text)) for record in page.rows],
            pager=Pager.of(request, page.total, offset=offset),
        )  # fmt: skip

    @router.get("/ui/deliveries", include_in_schema=False)
    async def deliveries(request: Request, session: SignedIn) -> Response:
        offset = page_offset(request)
        page = await console_reads(backend).failed_deliveries(limit=PAGE_SIZE, offset=offset)
        return console.render(
            request, "deliveries.html", session, page=page, pager=Pager.of(request, page.total, offset=offset)
        )
