"""What a client is told when the gateway's database is out of reach: 503 with ``Retry-After``, never a 500.

Invariants: the answer says what happened and what to do (try again in a moment) and reveals nothing of the
database (no address, no server message); the cause is logged once per request for the operator, who
also sees it in ``/readyz``. A web chat message refused this way is sent again by the page with the same
client id, which the inbound ledger answers at most once.
"""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.responses import JSONResponse

from agent_core.storage.errors import StateUnavailableError, WriteContentionError
from gateway.http.openai_wire import openai_error

_LOG = logging.getLogger("mnemogate.http")
RETRY_AFTER_S = 5
DETAIL = (
    "The gateway's database is out of reach right now, so this could not be taken or shown; "
    "please try again in a moment."
)


UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (StateUnavailableError, WriteContentionError)
"""What a storage backend raises while its database is away (or too busy to take a write)."""


async def storage_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """503 for a request that needed the database while it was away (or too busy to take a write), in the
    error shape of the API it called (OpenAI's under ``/v1``)."""
    _LOG.warning("%s %s: 503, the database is out of reach: %s", request.method, request.url.path, exc)
    headers = {"Retry-After": str(RETRY_AFTER_S)}
    if request.url.path.startswith("/v1/"):
        return openai_error(503, DETAIL, code="database_unavailable", headers=headers)
    return JSONResponse({"detail": DETAIL}, status_code=503, headers=headers)
