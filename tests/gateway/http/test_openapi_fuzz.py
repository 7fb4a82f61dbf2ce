"""A bounded property test over the app's own OpenAPI schema: no generated request gets a 5xx or a long error.

The app serves no schema (``openapi_url=None``); the test takes ``app.openapi()`` from an app built like
the other HTTP tests', served by real uvicorn in a thread of its own (schemathesis calls are blocking), plus
the admin API's own document, which the gateway serves behind the token at ``/admin/openapi.json``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from gateway.config import Home, Settings
from gateway.runtime import open_runtime
from tests.gateway.http.conftest import ADMIN_TOKEN, build_app, served

# Endless by design (a stream of server-sent events); its request side is just a cookie and a cursor.
_SKIPPED = {("GET", "/api/chat/stream")}
_MAX_ERROR_BODY = 2_000


@dataclass
class _Served:
    base_url: str
    schema: dict[str, Any]


@pytest.fixture
def served_gateway(home: Path) -> Iterator[_Served]:
    """The gateway served from its own thread and loop until the test ends."""
    ready = threading.Event()
    holder: dict[str, Any] = {}

    async def main() -> None:
        holder["loop"], holder["stop"] = asyncio.get_running_loop(), asyncio.Event()
        async with open_runtime(Home(home), Settings()) as runtime:
            gw = build_app(runtime)
            async with served(gw):
                holder["served"] = _Served(gw.base_url, await _with_admin_api(gw.base_url, gw.app.openapi()))
                ready.set()
                await holder["stop"].wait()

    def run() -> None:
        try:
            asyncio.run(main())
        finally:
            ready.set()

    thread = threading.Thread(target=run, name="gateway", daemon=True)
    thread.start()
    try:
        assert ready.wait(30) and "served" in holder, "the gateway did not start"
        yield holder["served"]
    finally:
        if "loop" in holder:
            holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(30)


async def _with_admin_api(base_url: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the admin API's paths and schemas (read from the running gateway) added."""
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        answer = await client.get("/admin/openapi.json", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    admin = answer.raise_for_status().json()
    schema["paths"].update(admin["paths"])
    schema.setdefault("components", {}).setdefault("schemas", {}).update(admin["components"]["schemas"])
    return schema


def test_no_generated_request_gets_a_server_error_or_a_long_error_body(served_gateway: _Served) -> None:
    schema = schemathesis.openapi.from_dict(served_gateway.schema)
    operations = [result.ok() for result in schema.get_all_operations() if isinstance(result, Ok)]
    tested = [op for op in operations if (op.method.upper(), op.path) not in _SKIPPED]
    # Requests that fit the schema and requests that break it (wrong types, out-of-range numbers).
    strategies = [op.as_strategy(mode) for op in tested for mode in GenerationMode]
    assert len(tested) >= 10
    seen: set[tuple[str, str]] = set()

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=st.one_of(strategies))
    def check(case: Any) -> None:
        if case.query and "wait" in case.query:
            case.query["wait"] = 0  # a long poll would hold the example for up to a minute
        response = case.call(
            base_url=served_gateway.base_url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=15
        )
        seen.add((case.method, case.path))
        where = f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:300]!r}"
        assert response.status_code < 500, where
        if response.status_code >= 400:
            assert len(response.content) < _MAX_ERROR_BODY, where

    check()
    assert len(seen) >= len(tested) // 2, sorted(seen)
