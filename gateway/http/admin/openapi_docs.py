"""The admin JSON API's OpenAPI document and its reference page, both behind the admin token.

Invariants: ``/admin/openapi.json`` describes exactly the JSON API's routes (console pages are not part of
it), with absolute ``/admin/...`` paths, the bearer scheme, and the one problem document as every error
response; it is served to a bearer-token caller or a signed-in console, never to anyone else; the
reference page is rendered on the server from that document (no CDN, no script).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.openapi.utils import get_openapi
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from gateway.http.access import BearerGuard

from .guards import SignedIn
from .pages_support import Console
from .problems import MEDIA_TYPE, problem_schema

_METHODS = ("get", "post", "put", "patch", "delete")
_ERRORS = {
    "401": "No or wrong bearer token (or no token configured: http.admin_token)",
    "404": "Not found",
    "422": "The request is not valid",
    "503": "A part of the gateway is not available now",
}
DESCRIPTION = (
    "The operator's JSON API of mnemogate. Send `Authorization: Bearer <http.admin_token>` with every "
    "request. Lists are paged (`limit`, `offset` → `next_offset`; messages by `after` → `next_after`); "
    "times are epoch seconds. Every error is an RFC 9457 problem document "
    "(`application/problem+json`: type, title, status, detail)."
)


@dataclass(frozen=True)
class Operation:
    """One operation of the document, as the reference page lists it."""

    method: str
    path: str
    summary: str
    description: str
    parameters: tuple[dict[str, Any], ...]
    body: str | None


def admin_openapi(routes: Sequence[BaseRoute], *, prefix: str = "/admin") -> dict[str, Any]:
    """The OpenAPI document of ``routes`` (the JSON API's, relative to ``prefix``)."""
    document = get_openapi(
        title="mnemogate admin API", version="1", description=DESCRIPTION, routes=list(routes)
    )
    components = document.setdefault("components", {})
    components.setdefault("schemas", {})["Problem"] = problem_schema()
    components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    document["security"] = [{"bearer": []}]
    problem = {"content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}}
    for item in document.get("paths", {}).values():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            for status, text in _ERRORS.items():
                responses[status] = {"description": text, **problem}
    schemas = components["schemas"]
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    document["paths"] = {f"{prefix}{path}": item for path, item in document.get("paths", {}).items()}
    return document


def operations(document: dict[str, Any]) -> list[Operation]:
    """The document's operations in path order, for the reference page."""
    found = []
    for path, item in document.get("paths", {}).items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            reference = body.get("schema", {}).get("$ref", "")
            found.append(
                Operation(
                    method=method.upper(),
                    path=path,
                    summary=_plain(operation.get("summary", "")),
                    description=_plain(operation.get("description", "")),
                    parameters=tuple(operation.get("parameters", ())),
                    body=reference.rsplit("/", 1)[-1] or None,
                )
            )
    return found


def _plain(text: object) -> str:
    """Markdown's code marks dropped, for the page (which shows text, not Markdown)."""
    return str(text).replace("`", "")


def docs_routes(router: APIRouter, console: Console, api: APIRouter, bearer: BearerGuard) -> None:
    """``/openapi.json`` (bearer token or console session) and the reference page ``/ui/api``."""
    guard = console.guard
    document = admin_openapi(api.routes)

    async def token_or_session(request: Request) -> None:
        if guard.current(request) is None:
            await bearer(request)

    @router.get("/openapi.json", include_in_schema=False, dependencies=[Depends(token_or_session)])
    async def openapi_json() -> Response:
        return JSONResponse(document)

    @router.get("/ui/api", include_in_schema=False)
    async def reference(request: Request, session: SignedIn) -> Response:
        schemas = document.get("components", {}).get("schemas", {})
        return console.render(
            request, "api_docs.html", session, operations=operations(document), schemas=schemas,
            description=_plain(DESCRIPTION),
        )  # fmt: skip
