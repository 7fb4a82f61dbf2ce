"""The console's erasure of one person: a page that says what will go and asks for the person id to be
typed back, and its form (CSRF-checked like every console form) that runs the same ``PersonEraser`` as the
CLI and the API, then shows the report."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from gateway.erasure import PersonEraser, ProviderNotClearedError, UnknownPersonError
from gateway.storage import PersonFootprint

from .guards import CheckedForm, SignedIn
from .pages_support import Console

CONSOLE_ERASER = "admin:console"


def erase_routes(router: APIRouter, console: Console, eraser: PersonEraser) -> None:
    @router.get("/ui/persons/{person_id}/erase", include_in_schema=False)
    async def confirm(person_id: str, request: Request, session: SignedIn) -> Response:
        found = await _footprint(eraser, person_id)
        return console.render(request, "erase.html", session, found=found, error=None, report=None)

    @router.post("/ui/persons/{person_id}/erase", include_in_schema=False)
    async def erase(person_id: str, request: Request, form: CheckedForm) -> Response:
        found = await _footprint(eraser, person_id)
        if form.get("confirm").strip() != person_id:
            return console.render(
                request, "erase.html", form.session, status=422, found=found, report=None,
                error="The id typed does not match this person's; nothing was erased.",
            )  # fmt: skip
        try:
            report = await eraser.erase(
                person_id, erased_by=CONSOLE_ERASER, skip_provider=form.get("skip_provider") == "on"
            )
        except ProviderNotClearedError as exc:
            return console.render(
                request, "erase.html", form.session, status=502, found=found, report=None, error=str(exc)
            )
        return console.render(request, "erase.html", form.session, found=found, error=None, report=report)


async def _footprint(eraser: PersonEraser, person_id: str) -> PersonFootprint:
    try:
        return await eraser.footprint(person_id)
    except UnknownPersonError as exc:
        raise HTTPException(404, str(exc)) from exc
