"""Who may call the admin API and the OpenAI-compatible endpoint: a bearer token.

Invariants: tokens are compared with ``hmac.compare_digest`` and never logged or echoed; with no token
configured the admin API answers 401 to everyone and the OpenAI-compatible endpoint serves loopback
clients only; the server refuses to listen on a non-loopback address without an admin token
(``check_exposure``).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence

from fastapi import HTTPException, Request
from pydantic import SecretStr

from gateway.http.errors import AdminExposureError

_LOOPBACK_NAMES = frozenset({"localhost", "testclient"})


def is_loopback(host: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and "localhost" (and Starlette's in-process test client)."""
    if not host:
        return False
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, admin_token: SecretStr | None) -> None:
    """Refuse to serve the admin API on a non-loopback ``host`` unless ``http.admin_token`` is set."""
    if admin_token is None and not is_loopback(host):
        raise AdminExposureError(
            f"http.admin_token is not set, so the admin API may only listen on a loopback address, "
            f"not {host!r}: set http.admin_token (MNEMOGATE_HTTP__ADMIN_TOKEN) or bind to 127.0.0.1"
        )


class BearerGuard:
    """A FastAPI dependency: 401 without a matching bearer token.

    With no token configured, ``loopback_without_token`` decides: open to clients on this machine only
    (the OpenAI-compatible API, for local chat clients), or closed to everyone (the admin API: a fresh
    install answers 401 until ``http.admin_token`` is set).
    """

    def __init__(
        self, tokens: Sequence[SecretStr | None], realm: str, *, loopback_without_token: bool = False
    ) -> None:
        self._tokens = tuple(
            t.get_secret_value().encode() for t in tokens if t is not None and t.get_secret_value()
        )
        self._realm = realm
        self._loopback_without_token = loopback_without_token

    async def __call__(self, request: Request) -> None:
        if not self._tokens:
            if not self._loopback_without_token:
                raise HTTPException(
                    401,
                    f"the {self._realm} is disabled until a token is configured (http.admin_token)",
                    headers={"WWW-Authenticate": "Bearer"},
                )
            client = request.client.host if request.client else None
            if not is_loopback(client):
                raise HTTPException(
                    403, f"the {self._realm} is reachable only from this machine (no token set)"
                )
            return
        scheme, _, presented = request.headers.get("authorization", "").partition(" ")
        candidate = presented.strip().encode()
        # Compare against every token without short-circuiting, so timing reveals nothing about which.
        matched = False
        for token in self._tokens:
            matched |= hmac.compare_digest(candidate, token)
        if scheme.lower() != "bearer" or not matched:
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})
