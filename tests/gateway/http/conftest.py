"""Fixtures: a real runtime on a temporary home, the app with every part mounted, served by real uvicorn."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from gateway.access import NewPersonBudget
from gateway.api import ApiChannel
from gateway.config import Home, HttpSettings, Settings
from gateway.export import PersonExporter
from gateway.http import AdminBackend, Metrics, PairingBook, Readiness, adapters_probe, create_app, serve_http
from gateway.identity import ClientKey
from gateway.runtime import Runtime, open_runtime, web_people
from gateway.storage.admin_reads import MAX_PAGE, AdminReads, MessageRow
from gateway.storage.sqlite.client_key_file import KEY_FILENAME, ClientKeyFile
from gateway.webchat import BrowserChat, WebChatAdapter
from tests.gateway.http.turn_double import InlineTurns

ADMIN_TOKEN = "admin-secret-token-123"
API_TOKEN = "api-secret-token-456"


@dataclass
class Gateway:
    runtime: Runtime
    app: FastAPI
    web: WebChatAdapter
    api: ApiChannel
    turns: InlineTurns
    metrics: Metrics
    base_url: str = ""

    def client(self, **kwargs: object) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, timeout=10, **kwargs)  # type: ignore[arg-type]

    def admin(self) -> httpx.AsyncClient:
        return self.client(headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


GatewayFactory = Callable[..., Awaitable[Gateway]]


def reads_of(runtime: Runtime) -> AdminReads:
    return runtime.storage.admin


async def stored_messages(runtime: Runtime, role: str | None = None) -> list[MessageRow]:
    """Every stored message (of ``role``) in every conversation, oldest first, through the admin port."""
    reads = reads_of(runtime)
    found: list[MessageRow] = []
    for conversation in (await reads.conversations(limit=MAX_PAGE)).rows:
        found += await reads.messages(conversation.id, limit=MAX_PAGE)
    return sorted((m for m in found if role is None or m.role == role), key=lambda m: m.id)


async def accounts_on(runtime: Runtime, platform: str) -> dict[str, str]:
    """The stored accounts of ``platform``: account id -> person id, through the admin port."""
    persons = (await reads_of(runtime).persons(limit=MAX_PAGE)).rows
    prefix = f"{platform}:"
    return {a.removeprefix(prefix): p.id for p in persons for a in p.accounts if a.startswith(prefix)}


@pytest.fixture
async def runtime(home: Path) -> AsyncIterator[Runtime]:
    async with open_runtime(Home(home), Settings()) as rt:
        yield rt


def build_app(
    runtime: Runtime,
    *,
    admin_token: str | None = ADMIN_TOKEN,
    api_token: str | None = API_TOKEN,
    pairing: PairingBook | None = None,
    **http_settings: Any,
) -> Gateway:
    """Every part mounted; ``http_settings`` are further ``HttpSettings`` fields (e.g. ``allowed_hosts``)."""
    web, api = BrowserChat(), ApiChannel()
    turns = InlineTurns(runtime, {"web": web, "api": api})
    reads = runtime.storage.admin
    metrics = Metrics(reads, store_stats=runtime.storage.stats, usage=runtime.storage.usage)
    http = HttpSettings(
        admin_token=SecretStr(admin_token) if admin_token else None,
        api_token=SecretStr(api_token) if api_token else None,
        api_reply_timeout_s=10,
        **http_settings,
    )

    async def state_probe() -> str:
        await runtime.storage.health.check_writable()
        return "ok"

    readiness = Readiness({"state_db": state_probe, "adapters": adapters_probe([web, api])})
    app = create_app(
        readiness,
        http=http,
        webchat=web,
        api_channel=api,
        metrics=metrics,
        admin=AdminBackend(
            reads,
            runtime.storage.agent,
            runtime.memory,
            runtime.search,
            pairing,
            console=runtime.storage.console,
            skills=runtime.skills,
            leases=runtime.storage.adapter_leases,
            usage=runtime.storage.usage,
            export=PersonExporter.configured(runtime.storage, runtime.home.root, runtime.settings),
        ),
        reads=reads,
        client_key=ClientKey(
            ClientKeyFile(runtime.home.root / KEY_FILENAME).read_or_create(secrets.token_bytes(32))
        ),
        new_web_persons=NewPersonBudget(runtime.storage.identity),
        people=web_people(runtime),
    )
    return Gateway(runtime, app, web, api, turns, metrics)


@contextlib.asynccontextmanager
async def served(gw: Gateway) -> AsyncIterator[Gateway]:
    """``gw`` with its channels started, served on a free port of 127.0.0.1."""
    await gw.web.start(gw.turns.handle)
    await gw.api.start(gw.turns.handle)
    async with serve_http(gw.app, "127.0.0.1", 0) as server:
        port = server.servers[0].sockets[0].getsockname()[1]
        gw.base_url = f"http://127.0.0.1:{port}"
        yield gw
        await gw.web.stop()
        await gw.api.stop()
        await gw.turns.drain()


@pytest.fixture
async def gateway(runtime: Runtime) -> AsyncIterator[Gateway]:
    """Every part mounted and started, served on a free port of 127.0.0.1."""
    async with served(build_app(runtime)) as gw:
        yield gw
