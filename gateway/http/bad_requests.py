"""Short, safe answers to malformed requests: nothing a client sent is echoed back.

Invariants: a validation error lists at most ``_MAX_ERRORS`` problems as location, message and type,
never the input (a 20 MB field is not returned, and text a browser sent cannot be reflected); a JSON
body holding a lone UTF-16 surrogate (``"\\ud800"`` without its pair) is refused with 400 before any
handler sees it, because no store or log could encode it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

_MAX_ERRORS = 10
_MAX_TEXT = 200
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _safe(text: object) -> str:
    """``text`` cut to a short length and encodable as UTF-8 (lone surrogates become escapes)."""
    value = str(text)[:_MAX_TEXT]
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 with where and what was wrong, without the offending value."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    detail: list[dict[str, Any]] = [
        {
            "loc": [part if isinstance(part, int) else _safe(part) for part in error.get("loc", ())],
            "msg": _safe(error.get("msg", "")),
            "type": _safe(error.get("type", "")),
        }
        for error in errors[:_MAX_ERRORS]
    ]
    if len(errors) > _MAX_ERRORS:
        detail.append({"loc": [], "msg": f"and {len(errors) - _MAX_ERRORS} more", "type": "truncated"})
    return JSONResponse({"detail": jsonable_encoder(detail)}, status_code=422)


async def reject_lone_surrogates(request: Request) -> None:
    """A dependency of every route: 400 when the JSON body holds an unpaired surrogate escape."""
    if request.method not in _BODY_METHODS:
        return
    body = await request.body()
    if not _SURROGATE_ESCAPE.search(body):  # the common case: no surrogate escape at all
        return
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return  # not JSON: the route's own parsing answers
    try:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        return
    except UnicodeEncodeError:
        raise HTTPException(
            400,
            "the request contains a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair); "
            "send valid Unicode text",
        ) from None
