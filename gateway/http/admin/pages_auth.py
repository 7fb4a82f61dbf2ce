"""Signing in to the console with the admin token, and signing out.

Invariants: the only page reachable without a session is the sign-in page (and the package's static CSS
and script); a sign-in succeeds only with the admin token (compared in constant time) and answers with a
session cookie that is HttpOnly, SameSite=Strict, limited to the console's path, Secure over https, and
expiring after ``admin.session_ttl_s``; a failed sign-in says so without saying why beyond "wrong token";
after signing in the browser goes back only to a page of this console; sign-in attempts are limited per
client address (``_ATTEMPTS``: 10 at once, then one per 6 s), so the token cannot be guessed at speed;
signing out needs the form's CSRF token, ends the session in this process and clears the cookie.
"""

from __future__ import annotations

import logging
import math

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from gateway.access import RateLimiter
from gateway.access.settings import TokenBucketSettings

from .guards import CheckedForm, form_fields, safe_next, same_origin
from .pages_support import Console, see_other
from .sessions import COOKIE

_LOG = logging.getLogger("mnemogate.http")
_ATTEMPTS = TokenBucketSettings(capacity=10, refill_s=6.0)


def auth_routes(router: APIRouter, console: Console) -> None:
    pages, guard = console.pages, console.guard
    sessions = guard.sessions
    attempts = RateLimiter(_ATTEMPTS)

    def sign_in_page(request: Request, *, status: int = 200, error: str | None = None) -> Response:
        root = request.scope.get("root_path", "")
        return pages.render(
            request,
            "sign_in.html",
            status=status,
            context={
                "enabled": sessions.enabled,
                "next": safe_next(root, request.query_params.get("next")),
                "error": error,
            },
        )

    @router.get("/sign-in", include_in_schema=False)
    async def sign_in_form(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        if guard.current(request) is not None:
            return RedirectResponse(safe_next(root, request.query_params.get("next")), status_code=303)
        return sign_in_page(request)

    @router.post("/sign-in", include_in_schema=False)
    async def sign_in(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        if not same_origin(request):
            return sign_in_page(request, status=403, error="This sign-in was sent from another site.")
        fields = await form_fields(request)
        allowed = attempts.check(request.client.host if request.client else "unknown")
        if not allowed.allowed:
            response = sign_in_page(request, status=429, error="Too many sign-in attempts; wait a moment.")
            response.headers["Retry-After"] = str(max(1, math.ceil(allowed.retry_after_s)))
            return response
        if not sessions.enabled:
            return sign_in_page(request, status=401)
        if not sessions.token_matches(fields.get("token", "")):
            _LOG.warning("admin console: a sign-in with a wrong token was refused")
            return sign_in_page(request, status=401, error="That is not the admin token.")
        cookie, _session = sessions.issue()
        response = RedirectResponse(safe_next(root, fields.get("next")), status_code=303)
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=int(sessions.ttl_s),
            path=root or "/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    @router.post("/sign-out", include_in_schema=False)
    async def sign_out(request: Request, form: CheckedForm) -> Response:
        sessions.revoke(form.session)
        response = see_other(request, "/sign-in", "signed-out")
        root = request.scope.get("root_path", "")
        response.delete_cookie(COOKIE, path=root or "/", httponly=True, samesite="strict")
        return response
