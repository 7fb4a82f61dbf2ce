"""While the database is out of reach, a browser or API client is told so — 503 with Retry-After and what to
do — never a bare 500, and nothing of the database (its address, the server's message) is shown."""

from __future__ import annotations

from pathlib import Path

import httpx

from agent_core.storage.errors import StateUnavailableError
from gateway.contracts import InboundMessage, InboundOutcome
from gateway.http import Readiness, create_app
from gateway.webchat import WebChatAdapter

DSN = "postgresql://app:hunter2@db.internal:5432/mnemogate"


async def database_away(message: InboundMessage) -> InboundOutcome:
    raise StateUnavailableError(Path(DSN), "couldn't get a connection after 5.00 sec")


async def test_a_message_sent_while_the_database_is_away_gets_a_clear_503() -> None:
    web, api = WebChatAdapter("web"), WebChatAdapter("api")
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
    for answer in (posted, asked):
        assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
        detail = answer.json()["detail"]
        assert "database is out of reach" in detail and "try again" in detail
        assert "db.internal" not in answer.text and "hunter2" not in answer.text
