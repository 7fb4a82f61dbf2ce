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

_LOG = logging.getLogger("mnemogate.http")
RETRY_AFTER_S = 5
DETAIL = (
    "The gateway's database is out of reach right now, so this could not be taken or shown; "
    "please try again in a moment."
)


async def storage_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """503 for a request that needed the database while it was away (or too busy to take a write)."""
    _LOG.warning("%s %s: 503, the database is out of reach: %s", request.method, request.url.path, exc)
    return JSONResponse({"detail": DETAIL}, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
