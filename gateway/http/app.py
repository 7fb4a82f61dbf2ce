"""The FastAPI application: routes only, every dependency handed in by the composition root.

``create_app(readiness)`` alone serves ``/healthz`` and ``/readyz``; each further part (web chat, metrics,
admin API, OpenAI-compatible endpoint, the platform adapters' webhook routes such as Telegram's webhook and
Slack's Events API) is mounted when its dependencies are given. Every route shares the same guards: the
Host check (``gateway.http.access.HostCheck``), request bodies cut at ``http.max_body_bytes`` before they
are parsed (413), and short error bodies (``gateway.http.bad_requests``). ``app.state.http`` records the
settings for ``serve_http``.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import Depends, FastAPI, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from agent_core.llm import ModelSettings
from gateway.access import NewPersonBudget
from gateway.api import ApiChannel, ServedModel, Transcripts
from gateway.config import HttpSettings
from gateway.contracts import HttpRoute
from gateway.http.access import BearerGuard, HostCheck, accepted_hosts
from gateway.http.admin_routes import AdminBackend, admin_router
from gateway.http.bad_requests import reject_lone_surrogates, validation_error
from gateway.http.metrics import CONTENT_TYPE, Metrics
from gateway.http.openai_compat import openai_router
from gateway.http.readiness import ReadinessCheck
from gateway.http.schedule_routes import schedule_router
from gateway.http.webchat_routes import webchat_router
from gateway.identity import ClientKey
from gateway.schedules import ScheduleBook
from gateway.storage.admin_reads import AdminReads
from gateway.webchat import WebChatAdapter


def create_app(
    readiness: ReadinessCheck,
    *,
    http: HttpSettings | None = None,
    webchat: WebChatAdapter | None = None,
    api_channel: ApiChannel | None = None,
    api_model: ServedModel | None = None,
    metrics: Metrics | None = None,
    admin: AdminBackend | None = None,
    adapter_routes: Sequence[HttpRoute] = (),
    client_key: ClientKey | None = None,
    new_web_persons: NewPersonBudget | None = None,
    reads: AdminReads | None = None,
    transcripts: Transcripts | None = None,
    schedules: ScheduleBook | None = None,
) -> FastAPI:
    """The gateway's one HTTP app; see the module docstring for what each argument mounts.

    ``client_key`` turns cookies and API tokens into account ids (``ClientKey.for_home``; default: a key
    for this process only); ``new_web_persons`` limits new browsers per client address (default: the
    ``rate_limit.new_web_persons`` budget, every browser counted as new);
    ``reads`` serves the web chat's history and the OpenAI endpoint's stored history and usage (none and
    zero without it); ``api_model`` is the model ``/v1`` names (default: the offline model), and
    ``transcripts`` the stored messages it compares a request's earlier turns with; ``schedules`` mounts
    the admin API's schedule routes (behind the same admin token).
    """
    settings = http or HttpSettings()
    app = FastAPI(
        title="mnemogate",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        max_body_size=settings.max_body_bytes,
        dependencies=[Depends(reject_lone_surrogates)],
    )
    app.state.http = settings
    app.add_middleware(HostCheck, allowed=accepted_hosts(settings))
    app.add_exception_handler(RequestValidationError, validation_error)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        checks = await readiness()
        # "ok (…)" marks a degraded component that does not block turns (e.g. the memory provider).
        ready = all(value == "ok" or value.startswith("ok (") for value in checks.values())
        return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)

    if metrics is not None:
        scrape = metrics

        @app.get("/metrics")
        async def metrics_text() -> Response:
            return Response(await scrape.render(), media_type=CONTENT_TYPE)

    if webchat is not None:
        app.include_router(
            webchat_router(webchat, client_key=client_key, new_persons=new_web_persons, reads=reads)
        )
    if admin is not None:
        app.include_router(admin_router(admin, BearerGuard([settings.admin_token], "admin API")))
    if schedules is not None:
        app.include_router(schedule_router(schedules, BearerGuard([settings.admin_token], "admin API")))
    if api_channel is not None:
        guard = BearerGuard(
            [settings.admin_token, settings.api_token], "OpenAI-compatible API", loopback_without_token=True
        )
        app.include_router(
            openai_router(
                api_channel,
                guard,
                settings.api_reply_timeout_s,
                model=api_model or ServedModel.of(ModelSettings()),
                client_key=client_key,
                reads=reads,
                transcripts=transcripts,
            )
        )
    for route in adapter_routes:
        app.add_api_route(route.path, route.endpoint, methods=list(route.methods))
    return app
