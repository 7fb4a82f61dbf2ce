"""The admin surface as one ASGI app, mounted at ``/admin``: the bearer-token JSON API, its OpenAPI document,
and the console for the browser (sign-in, pages, forms, static CSS and script from this package).

Invariants: every JSON API route needs the bearer token; every console page needs a signed-in session and
every console form its CSRF token (``guards.py``); the sign-in page and the static assets are the only
things served to anyone else, and they hold no data; every error is a problem document for the API and an
HTML page for the console (``problems.py``); the parent app's Host check and body limit apply here too.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI, Request
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from gateway.config import HttpSettings
from gateway.http.access import BearerGuard
from gateway.http.bad_requests import reject_lone_surrogates
from gateway.http.metrics import Metrics
from gateway.http.readiness import ReadinessCheck

from .api import admin_router
from .backend import AdminBackend
from .clock import ConsoleClock
from .erase_api import erase_router
from .export_routes import export_api_router, export_console_routes
from .guards import ConsoleGuard, SignInRequired, sign_in_location
from .openapi_docs import docs_routes
from .pages_auth import auth_routes
from .pages_conversations import conversation_routes
from .pages_erase import erase_routes
from .pages_operations import operations_routes
from .pages_overview import overview_routes
from .pages_persons import person_routes
from .pages_schedules import schedule_routes
from .pages_support import Console
from .problems import install_handlers
from .rendering import ConsolePages
from .schedules_api import schedule_router
from .sessions import ConsoleSessions
from .usage_api import usage_router

_PAGES = frozenset({"/", "/sign-in", "/sign-out"})


def is_page(request: Request) -> bool:
    """True for the console's pages (HTML errors), False for the JSON API (problem documents)."""
    path = request.url.path.removeprefix(request.scope.get("root_path", "")) or "/"
    return path in _PAGES or path.startswith("/ui/")


def admin_app(
    backend: AdminBackend,
    http: HttpSettings,
    *,
    readiness: ReadinessCheck | None = None,
    metrics: Metrics | None = None,
    clock: ConsoleClock | None = None,
) -> FastAPI:
    """The ``/admin`` app over ``backend``; ``readiness`` and ``metrics`` feed the overview's health."""
    app = FastAPI(
        title="mnemogate admin",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(reject_lone_surrogates)],
    )
    sessions = ConsoleSessions(http.admin_token, ttl_s=backend.settings.session_ttl_s)
    pages = ConsolePages(clock or ConsoleClock(backend.settings.timezone))
    guard = ConsoleGuard(sessions)
    console = Console(backend, pages, guard)
    app.state.console_guard = guard
    bearer = BearerGuard([http.admin_token], "admin API")
    api = admin_router(backend, bearer)
    if backend.schedules is not None:
        api.include_router(schedule_router(backend.schedules, bearer))
    if backend.usage is not None:
        api.include_router(usage_router(backend.usage, backend.reads, backend.usage_zone, bearer))
    if backend.eraser is not None:
        api.include_router(erase_router(backend.eraser, bearer))
    api.include_router(export_api_router(backend, bearer))
    site = APIRouter()
    auth_routes(site, console)
    overview_routes(site, console, readiness=readiness, metrics=metrics)
    conversation_routes(site, console)
    person_routes(site, console)
    export_console_routes(site, backend)
    operations_routes(site, console)
    schedule_routes(site, console)
    if backend.eraser is not None:
        erase_routes(site, console, backend.eraser)
    docs_routes(site, console, api, bearer)
    app.include_router(site)
    app.include_router(api)
    app.mount("/assets", StaticFiles(packages=[("gateway.http.admin", "static")]), name="assets")

    async def error_page(request: Request, status: int, detail: str) -> Response:
        session = guard.current(request)
        csrf = sessions.csrf_token(session) if session is not None else None
        return pages.render(
            request, "error.html", status=status, csrf=csrf, context={"status": status, "detail": detail}
        )

    async def to_sign_in(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SignInRequired)
        root = request.scope.get("root_path", "")
        return RedirectResponse(sign_in_location(root, exc.next_path, expired=exc.expired), status_code=303)

    install_handlers(app, is_page=is_page, page=error_page)
    app.add_exception_handler(SignInRequired, to_sign_in)
    return app
