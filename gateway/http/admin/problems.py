"""The admin surface's one error shape: RFC 9457 problem details, for every error of the JSON API.

Invariants: every error under ``/admin`` that is not a console page is ``application/problem+json`` with
``type``, ``title``, ``status`` and ``detail`` (a string), plus ``errors`` (validation: where and what, never
the offending value) or ``result`` (a refused memory edit's result) when there is more to say; nothing a
client sent is echoed beyond a short, cut ``detail``; a console page gets the same status as an HTML page.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from gateway.http.bad_requests import validation_error
from gateway.http.unavailable import DETAIL as UNAVAILABLE_DETAIL
from gateway.http.unavailable import UNAVAILABLE_ERRORS, storage_unavailable

MEDIA_TYPE = "application/problem+json"
_MAX_DETAIL = 500

PageRenderer = Callable[[Request, int, str], Awaitable[Response]]


class AdminProblem(StarletteHTTPException):
    """An HTTP error with extra problem members (``errors``, ``result``) beside its detail."""

    def __init__(
        self, status: int, detail: str, *, headers: dict[str, str] | None = None, **members: Any
    ) -> None:
        super().__init__(status, detail, headers)
        self.members = members


def problem(
    status: int, detail: str, *, headers: dict[str, str] | None = None, **members: Any
) -> JSONResponse:
    """The problem document for ``status`` with ``detail`` and any extra ``members``."""
    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail[:_MAX_DETAIL]}
    body.update(jsonable_encoder(members))
    return JSONResponse(body, status_code=status, headers=headers, media_type=MEDIA_TYPE)


def problem_schema() -> dict[str, Any]:
    """The OpenAPI schema of the problem document (every error response of the admin API)."""
    return {
        "title": "Problem",
        "type": "object",
        "required": ["type", "title", "status", "detail"],
        "properties": {
            "type": {"type": "string", "example": "about:blank"},
            "title": {"type": "string", "example": "Not Found"},
            "status": {"type": "integer", "example": 404},
            "detail": {"type": "string", "example": "no conversation 'cv_123'"},
            "errors": {
                "type": "array",
                "description": "validation errors: where and what (never the value sent)",
                "items": {"type": "object"},
            },
            "result": {"type": "object", "description": "a refused memory edit's result"},
        },
    }


def install_handlers(app: Any, *, is_page: Callable[[Request], bool], page: PageRenderer) -> None:
    """Route every error of ``app`` (a FastAPI app) to a problem document, or ``page`` for console pages."""

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        if is_page(request):
            return await page(request, exc.status_code, detail)
        members = exc.members if isinstance(exc, AdminProblem) else {}
        return problem(exc.status_code, detail, headers=getattr(exc, "headers", None), **members)

    async def invalid(request: Request, exc: Exception) -> Response:
        if is_page(request):
            return await page(request, 422, "Some fields of the form were not valid.")
        short = await validation_error(request, exc)  # the safe list: location, message, type
        errors = _decoded(short.body)["detail"]
        return problem(422, "the request is not valid: see errors", errors=errors)

    async def database_away(request: Request, exc: Exception) -> Response:
        logged = await storage_unavailable(request, exc)  # logs the cause once for the operator
        headers = {"Retry-After": logged.headers["Retry-After"]}
        if is_page(request):
            response = await page(request, 503, UNAVAILABLE_DETAIL)
            response.headers.update(headers)
            return response
        return problem(503, UNAVAILABLE_DETAIL, headers=headers)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
    for unavailable in UNAVAILABLE_ERRORS:
        app.add_exception_handler(unavailable, database_away)


def _decoded(body: bytes | memoryview) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(bytes(body))
    return decoded
