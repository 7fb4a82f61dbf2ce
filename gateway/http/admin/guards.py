"""Who may see a console page and submit its forms: the signed-in session, and CSRF checks on every form.

Invariants: a console page without a valid session cookie answers nothing but a redirect to the sign-in
page (GET) or 401 (anything else); a form is accepted only with the session's CSRF token and, when the
browser names an ``Origin``, only from this site; form bodies are ``application/x-www-form-urlencoded``
(already cut at ``http.max_body_bytes``) and at most ``_MAX_FIELDS`` fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated
from urllib.parse import parse_qsl, quote, urlsplit

from fastapi import Depends, HTTPException, Request

from .sessions import COOKIE, ConsoleSession, ConsoleSessions

_MAX_FIELDS = 20
FORM_TYPE = "application/x-www-form-urlencoded"


class SignInRequired(Exception):
    """A console page was asked for without a valid session: send the browser to the sign-in page."""

    def __init__(self, next_path: str, *, expired: bool) -> None:
        super().__init__(next_path)
        self.next_path = next_path
        self.expired = expired


@dataclass(frozen=True)
class ConsoleForm:
    """A submitted form: the session that sent it and its fields (first value of each name)."""

    session: ConsoleSession
    fields: dict[str, str]

    def get(self, name: str, default: str = "") -> str:
        return self.fields.get(name, default)


async def form_fields(request: Request) -> dict[str, str]:
    """The urlencoded fields of ``request`` (415 for another body type, 400 for a malformed one)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != FORM_TYPE:
        raise HTTPException(415, f"forms are sent as {FORM_TYPE}")
    try:
        pairs = parse_qsl(
            (await request.body()).decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=_MAX_FIELDS,
        )
    except (UnicodeDecodeError, ValueError) as exc:
        raise HTTPException(400, "the form could not be read") from exc
    fields: dict[str, str] = {}
    for name, value in pairs:
        fields.setdefault(name, value)
    return fields


class ConsoleGuard:
    """FastAPI dependencies for console pages (``page``) and forms (``form``)."""

    def __init__(self, sessions: ConsoleSessions) -> None:
        self.sessions = sessions

    def current(self, request: Request) -> ConsoleSession | None:
        return self.sessions.verify(request.cookies.get(COOKIE))

    async def page(self, request: Request) -> ConsoleSession:
        session = self.current(request)
        if session is not None:
            return session
        if request.method != "GET":
            raise HTTPException(401, "sign in to the admin console first")
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInRequired(target, expired=COOKIE in request.cookies)

    async def form(self, request: Request) -> ConsoleForm:
        session = await self.page(request)
        if not same_origin(request):
            raise HTTPException(403, "this form was sent from another site")
        fields = await form_fields(request)
        if not self.sessions.csrf_matches(session, fields.get("csrf")):
            raise HTTPException(403, "the form's security token is missing or wrong: reload the page")
        return ConsoleForm(session, fields)


def same_origin(request: Request) -> bool:
    """False when the browser says the request comes from another site than the one it asked.

    The ``Origin``'s host and port are compared with the ``Host`` the browser sent (or the one a reverse
    proxy forwarded): a page of another site cannot set either header on a form it submits. The scheme is
    not compared, since a TLS proxy in front may reach the gateway over plain HTTP.
    """
    origin = request.headers.get("origin")
    if origin is None:  # not every browser sends it on same-origin requests; the CSRF token still guards
        return True
    sent = urlsplit(origin).netloc.lower() if origin != "null" else ""
    hosts = {request.headers.get("host", ""), request.headers.get("x-forwarded-host", "")}
    return bool(sent) and sent in {host.lower().strip() for host in hosts if host}


def sign_in_location(root: str, next_path: str, *, expired: bool) -> str:
    """The sign-in page's URL that leads back to ``next_path``."""
    query = f"?next={quote(next_path, safe='/')}" + ("&done=expired" if expired else "")
    return f"{root}/sign-in{query}"


def safe_next(root: str, candidate: str | None) -> str:
    """Where to go after signing in: a path of this console only (never another site), else the overview."""
    if not candidate:
        return f"{root}/"
    parts = urlsplit(candidate)
    if parts.scheme or parts.netloc or not candidate.startswith(f"{root}/") or "\\" in candidate:
        return f"{root}/"
    return candidate


def _guard(request: Request) -> ConsoleGuard:
    guard: ConsoleGuard = request.app.state.console_guard  # set by ``admin_app``
    return guard


async def signed_in(request: Request) -> ConsoleSession:
    """Dependency: the page's session (``ConsoleGuard.page``)."""
    return await _guard(request).page(request)


async def checked_form(request: Request) -> ConsoleForm:
    """Dependency: the submitted form, its session and CSRF token checked (``ConsoleGuard.form``)."""
    return await _guard(request).form(request)


SignedIn = Annotated[ConsoleSession, Depends(signed_in)]
CheckedForm = Annotated[ConsoleForm, Depends(checked_form)]
