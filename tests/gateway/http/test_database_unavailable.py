"""While the database is out of reach, a browser or API client is told so — 503 with Retry-After and what to
do — never a bare 500, and nothing of the database (its address, the server's message) is shown."""

from __future__ import annotations

from pathlib import Path

import httpx

from agent_core.storage.errors import StateUnavailableError
from gateway.api import ApiChannel
from gateway.contracts import InboundMessage, InboundOutcome
from gateway.http import Readiness, create_app
from gateway.webchat import BrowserChat

DSN = "postgresql://app:hunter2@db.internal:5432/mnemogate"


async def database_away(message: InboundMessage) -> InboundOutcome:
    raise StateUnavailableError(Path(DSN), "couldn't get a connection after 5.00 sec")


async def test_a_message_sent_while_the_database_is_away_gets_a_clear_503() -> None:
    web, api = BrowserChat(), ApiChannel()
    await web.start(database_away)
    await api.start(database_away)
    app = create_app(Readiness({}), webchat=web, api_channel=api)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        posted = await client.post("/api/chat/messages", json={"text": "hello", "client_message_id": "m1"})
        asked = await client.post(
            "/v1/chat/completions",
            json={"model": "mnemogate", "messages": [{"role": "user", "content": "hi"}]},
        )
    # Each in the error shape of the API it called: the web chat's, OpenAI's for /v1.
    details = [posted.json()["detail"], asked.json()["error"]["message"]]
    for answer, detail in zip((posted, asked), details, strict=True):
        assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
        assert "database is out of reach" in detail and "try again" in detail
        assert "db.internal" not in answer.text and "hunter2" not in answer.text
