"""Downloading everything stored about one person as the export archive (``gateway.export``): from the JSON
API (``GET /admin/persons/{id}/export``, bearer token) and from the console's person page (signed in).

Invariants: the archive is built in a private temporary directory, streamed as ``application/zip`` and
removed once sent (or when building it failed); an unknown person is a 404 and a gateway started without
an exporter a 503, before anything is built; every download is logged with the person's id.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import time
from pathlib import Path

from fastapi import APIRouter, Depends, HTTPException
from starlette.background import BackgroundTask
from starlette.responses import FileResponse, Response

from gateway.export import PersonExporter, UnknownPersonError
from gateway.http.access import BearerGuard

from .backend import AdminBackend
from .guards import SignedIn

_LOG = logging.getLogger(__name__)
MEDIA_TYPE = "application/zip"


def export_api_router(backend: AdminBackend, guard: BearerGuard) -> APIRouter:
    """``GET /persons/{person_id}/export`` behind the admin bearer token."""
    router = APIRouter(dependencies=[Depends(guard)], tags=["admin"])

    @router.get(
        "/persons/{person_id}/export",
        summary="Download everything stored about a person (a zip: JSON, JSON Lines and memory files)",
        response_class=Response,
        responses={200: {"content": {MEDIA_TYPE: {}}, "description": "the export archive"}},
    )
    async def export_person(person_id: str) -> Response:
        return await download(backend, person_id, by="admin:api")

    return router


def export_console_routes(router: APIRouter, backend: AdminBackend) -> None:
    """``GET /ui/persons/{person_id}/export``: the person page's download link."""

    @router.get("/ui/persons/{person_id}/export", include_in_schema=False)
    async def export_person(person_id: str, session: SignedIn) -> Response:
        return await download(backend, person_id, by="admin:console")


async def download(backend: AdminBackend, person_id: str, *, by: str) -> Response:
    """The person's archive as a file response that removes its temporary copy once sent."""
    exporter = _exporter(backend)
    folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="mnemogate-export-"))
    name = f"mnemogate-person-{_safe(person_id)}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}.zip"
    try:
        summary = await exporter.export(person_id, folder / name)
    except UnknownPersonError as exc:
        await asyncio.to_thread(shutil.rmtree, folder, True)
        raise HTTPException(404, str(exc)) from exc
    except BaseException:
        await asyncio.to_thread(shutil.rmtree, folder, True)
        raise
    _LOG.info("person %s exported by %s (%d bytes)", person_id, by, summary.bytes)
    return FileResponse(
        summary.path,
        media_type=MEDIA_TYPE,
        filename=name,
        background=BackgroundTask(shutil.rmtree, folder, True),
        headers={"Cache-Control": "no-store"},
    )


def _exporter(backend: AdminBackend) -> PersonExporter:
    if backend.export is None:
        raise HTTPException(503, "this gateway was started without the person export (AdminBackend.export)")
    return backend.export


def _safe(person_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in person_id)[:64] or "person"
