"""``/healthz`` says the process is up; ``/readyz`` reports each component and is 503 until all are ok."""

from __future__ import annotations

import asyncio

import httpx

from gateway.http import Readiness, create_app
from tests.gateway.http.conftest import Gateway


async def _get(app: object, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.get(path)


async def test_ready_when_db_writable_and_adapters_started(gateway: Gateway) -> None:
    async with gateway.client() as client:
        health = await client.get("/healthz")
        ready = await client.get("/readyz")
    assert health.json() == {"status": "ok"}
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "checks": {"state_db": "ok", "adapters": "ok"}}


async def test_not_ready_names_the_disconnected_adapter(gateway: Gateway) -> None:
    await gateway.api.stop()
    async with gateway.client() as client:
        ready = await client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["adapters"] == "not connected: api (not started)"
    assert ready.json()["checks"]["state_db"] == "ok"


async def test_a_failing_or_hanging_probe_is_reported_not_raised() -> None:
    async def broken() -> str:
        raise RuntimeError("workers gone")

    async def hanging() -> str:
        await asyncio.Event().wait()
        return "ok"

    async def fine() -> str:
        return "ok"

    app = create_app(Readiness({"workers": broken, "delivery": hanging, "db": fine}, timeout=0.2))
    ready = await _get(app, "/readyz")
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["workers"] == "error: RuntimeError: workers gone"
    assert checks["delivery"].startswith("no answer within")
    assert checks["db"] == "ok"
    assert (await _get(app, "/healthz")).status_code == 200
