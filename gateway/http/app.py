"""The FastAPI application: routes only, every dependency handed in by the composition root."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI
from fastapi.responses import JSONResponse

ReadinessCheck = Callable[[], Awaitable[dict[str, str]]]


def create_app(readiness: ReadinessCheck) -> FastAPI:
    """``/healthz``: the process is up. ``/readyz``: every component reports ``ok`` (503 otherwise)."""
    app = FastAPI(title="mnemogate", docs_url=None, redoc_url=None)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        checks = await readiness()
        ready = all(value == "ok" for value in checks.values())
        return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)

    return app
