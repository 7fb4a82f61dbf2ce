"""Slack's side of the Events API as the serve-level Slack tests play it: signed deliveries to the route.

The bytes signed are the bytes sent; a re-delivery carries ``X-Slack-Retry-Num`` and its reason, as Slack's.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.adapters.fakes.slack_server import sign
from tests.multiprocess.serve_process import ServeProcess

SECRET = "e2e-slack-signing-secret"
EVENTS_PATH = "/webhooks/slack/events"


def dm_channel(user: str) -> str:
    """The DM channel the fake Slack gives ``user`` (``UALICE`` talks in ``DALICE``)."""
    return "D" + user[1:]


async def post_event(
    gateway: ServeProcess, body: dict[str, Any], *, retry: int, reason: str
) -> httpx.Response:
    """POST ``body`` signed with ``SECRET``; ``retry`` > 0 makes it Slack's re-delivery for ``reason``.

    Raises ``httpx.HTTPError`` when nothing answers (the gateway is down or stopping).
    """
    raw = json.dumps(body).encode()
    headers = sign(SECRET, raw)
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": reason}
    async with httpx.AsyncClient(base_url=gateway.base_url, timeout=5) as client:
        return await client.post(EVENTS_PATH, content=raw, headers=headers)
