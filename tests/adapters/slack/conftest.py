"""A real slack-bolt adapter wired to the loopback fake Slack, served on real uvicorn, and a signed poster."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from adapters.slack import SlackAdapter, create_adapter
from tests.adapters.fakes.gateway_http import serve_routes as serve
from tests.adapters.fakes.recording_sink import RecordingSink
from tests.adapters.fakes.slack_server import FakeSlackServer, sign

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
EVENTS_PATH = "/webhooks/slack/events"


def adapter_settings(fake: FakeSlackServer, **overrides: Any) -> dict[str, Any]:
    return {
        "bot_token": fake.bot_token,
        "signing_secret": SECRET,
        "api_base_url": fake.api_base_url,
        **overrides,
    }


@dataclass
class SlackEvents:
    """Slack's side of the Events API: POSTs signed bodies to our endpoint."""

    client: httpx.AsyncClient
    secret: str = SECRET

    async def post(
        self, body: dict[str, Any], *, retry_num: int | None = None, secret: str | None = None
    ) -> httpx.Response:
        raw = json.dumps(body).encode()  # sign the exact bytes sent
        headers = sign(secret or self.secret, raw)
        if retry_num is not None:
            headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return await self.client.post(EVENTS_PATH, content=raw, headers=headers)


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlackServer]:
    async with FakeSlackServer(team_tokens={"T0002": "xoxb-second-workspace"}) as server:
        yield server


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
async def adapter(fake: FakeSlackServer, sink: RecordingSink) -> AsyncIterator[SlackAdapter]:
    slack = create_adapter(adapter_settings(fake, team_tokens={"T0002": "xoxb-second-workspace"}))
    async with slack:
        await slack.start(sink)
        yield slack


@pytest.fixture
async def slack(adapter: SlackAdapter) -> AsyncIterator[SlackEvents]:
    async with serve(adapter) as base_url, httpx.AsyncClient(base_url=base_url) as client:
        yield SlackEvents(client)
