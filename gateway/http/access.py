"""Who may call the gateway: a bearer token for the admin and OpenAI-compatible APIs, a Host check for all.

Invariants: tokens are compared with ``hmac.compare_digest`` and never logged or echoed; with no token
configured the admin API answers 401 to everyone and the OpenAI-compatible endpoint serves loopback
clients only; the server refuses to listen on a non-loopback address without an admin token
(``check_exposure``); with no admin token (or with one and a non-empty ``http.allowed_hosts``) every
route but ``/healthz`` answers only requests whose Host is a loopback name or listed in
``http.allowed_hosts``, so a web page on another site cannot reach the gateway by pointing its own DNS
name at 127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Sequence
from urllib.parse import urlsplit

from fastapi import HTTPException, Request
from pydantic import SecretStr
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.config import HttpSettings
from gateway.http.errors import AdminExposureError

_LOOPBACK_NAMES = frozenset({"localhost", "testclient"})
_UNCHECKED_PATHS = frozenset({"/healthz"})  # a constant answer for probes that use a container's address
_LOG = logging.getLogger("mnemogate.http")


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


def accepted_hosts(settings: HttpSettings) -> list[str] | None:
    """The Host names ``settings`` accept: loopback ones plus ``http.allowed_hosts``, or None for any.

    Without an admin token the check always applies; with one, an empty ``allowed_hosts`` accepts any
    name (a reverse proxy in front decides).
    """
    if settings.admin_token is not None and not settings.allowed_hosts:
        return None
    return ["localhost", *settings.allowed_hosts]


class HostCheck:
    """ASGI middleware: 400 for a request whose Host header is not an accepted name (see the module doc).

    ``allowed`` holds exact names and ``*.example.com`` patterns; ``None`` accepts any Host.
    """

    def __init__(self, app: ASGIApp, allowed: Sequence[str] | None) -> None:
        self._app = app
        self._exact = frozenset(n.lower().rstrip(".") for n in allowed or () if not n.startswith("*"))
        self._suffixes = tuple(n[1:].lower().rstrip(".") for n in allowed or () if n.startswith("*."))
        self._any = allowed is None or "*" in allowed

    def accepts(self, host_header: str | None) -> bool:
        if self._any:
            return True
        if not host_header or any(c in host_header for c in "@/?#\\ "):  # a name and a port, nothing else
            return False
        try:
            name = urlsplit("//" + host_header).hostname
        except ValueError:  # e.g. an unbalanced "[" or a port that is not a number
            return False
        if not name:
            return False
        name = name.rstrip(".")
        if name in self._exact or name.endswith(self._suffixes):
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in _UNCHECKED_PATHS or self._any:
            await self._app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        if self.accepts(host):
            await self._app(scope, receive, send)
            return
        _LOG.warning("refused a request for a Host that is not loopback or in http.allowed_hosts")
        refusal = PlainTextResponse(
            "this gateway answers only to loopback host names and those in http.allowed_hosts", 400
        )
        await refusal(scope, receive, send)
