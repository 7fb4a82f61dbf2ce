"""A fake Slack Web API (and Socket Mode websocket) on 127.0.0.1 that real slack_sdk/slack-bolt clients use.

It owns: a record of every Web API call (``POST|GET /api/<method>``, form, JSON or query parameters, bearer
token checked, arrival time, whether it was rejected), mrkdwn validation of posted texts (a stray
``<``/``>``/``&`` or an unclosed code fence gives ``invalid_mrkdwn``, which real Slack would render as
garbage or a broken control sequence), Slack's length limits (chat.postMessage 40,000 characters,
chat.update 4,000: ``msg_too_long``), one-shot injected failures (``fail_next``, e.g. a 429 with
``Retry-After``), and a Socket Mode websocket that pushes ``events_api`` envelopes and waits for their
acks. Helpers build Events API bodies and sign them like Slack does.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

Json = dict[str, Any]
POST_LIMIT = 40_000
UPDATE_LIMIT = 4_000
_CONTROL = re.compile(r"<([^<>]*)>")
_CONTROL_TARGETS = ("http://", "https://", "mailto:", "@", "#", "!")
_BARE_AMP = re.compile(r"&(?!(?:amp|lt|gt);)")


class SlackRejection(Exception):
    """A Web API error answer: HTTP status, Slack error code, optional Retry-After seconds."""

    def __init__(self, error: str, status: int = 200, retry_after: int | None = None) -> None:
        super().__init__(error)
        self.error, self.status, self.retry_after = error, status, retry_after


def slack_mrkdwn_text(text: str) -> str:
    """The visible text of a mrkdwn message; ``SlackRejection('invalid_mrkdwn')`` if it is malformed."""
    visible: list[str] = []
    position = 0
    for match in _CONTROL.finditer(text):
        visible.append(text[position : match.start()])
        target, _, label = match.group(1).partition("|")
        if not target.startswith(_CONTROL_TARGETS):
            raise SlackRejection("invalid_mrkdwn")
        visible.append(label or target)
        position = match.end()
    visible.append(text[position:])
    plain = "".join(visible)
    for line in plain.split("\n"):
        if "<" in line or ">" in line.removeprefix(">"):
            raise SlackRejection("invalid_mrkdwn")
    if _BARE_AMP.search(plain) or text.count("```") % 2:
        raise SlackRejection("invalid_mrkdwn")
    return plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def sign(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends with an Events API request: ``v0=HMAC_SHA256(secret, v0:ts:body)``."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Signature": f"v0={digest}",
        "X-Slack-Request-Timestamp": ts,
        "Content-Type": "application/json",
    }


@dataclass(frozen=True)
class ApiCall:
    """One Web API request as the fake received it."""

    method: str
    params: Mapping[str, Any]
    token: str
    at: float = field(default_factory=time.monotonic, compare=False)
    """``time.monotonic()`` when the request arrived (to measure waits such as a honoured Retry-After)."""


@dataclass
class FakeSlackServer:
    """The fake Slack; ``async with FakeSlackServer() as fake`` serves it on a free loopback port."""

    bot_token: str = "xoxb-test-token"
    app_token: str = "xapp-1-test"
    team_id: str = "T0001"
    bot_user_id: str = "UBOT"
    bot_id: str = "BBOT"
    team_tokens: dict[str, str] = field(default_factory=dict)
    """Bot tokens of further workspaces (team id -> token) the fake also accepts."""
    calls: list[ApiCall] = field(default_factory=list)
    acks: list[str] = field(default_factory=list)
    rejected: list[ApiCall] = field(default_factory=list)
    """The calls answered with an error (``ok: false``), e.g. the one a ``fail_next`` 429 hit."""
    _failures: dict[str, list[SlackRejection]] = field(default_factory=dict)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _event_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    port: int = 0

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._endpoint)
        app.router.add_get("/link", self._socket_mode)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for connection in list(self._sockets):
            await connection.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    # -- scripting -------------------------------------------------------------------------------------

    def next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ts):06d}"

    def event_body(self, event: Json, *, team_id: str | None = None, event_id: str | None = None) -> Json:
        """An Events API ``event_callback`` body around ``event``."""
        team = team_id or self.team_id
        return {
            "token": "legacy-verification-token",
            "team_id": team,
            "api_app_id": "A0001",
            "event": {"team": team, **event},
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._event_ids):08d}",
            "event_time": int(time.time()),
        }

    def message(
        self, channel: str, user: str, text: str, *, thread_ts: str | None = None, **extra: Any
    ) -> Json:
        """A ``message`` event; ``channel_type`` from the id's letter (D = im, G = group, C = channel)."""
        kinds = {"D": "im", "G": "group", "C": "channel"}
        event: Json = {
            "type": "message",
            "channel": channel,
            "user": user,
            "text": text,
            "ts": self.next_ts(),
            "channel_type": kinds.get(channel[:1], "channel"),
            **extra,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    def mention(self, channel: str, user: str, text: str, *, thread_ts: str | None = None) -> Json:
        """An ``app_mention`` event (Slack sends it alongside the channel's ``message`` event)."""
        event: Json = {
            "type": "app_mention",
            "channel": channel,
            "user": user,
            "ts": self.next_ts(),
            "text": f"<@{self.bot_user_id}> {text}",
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    def fail_next(
        self, method: str, error: str, *, status: int = 200, retry_after: int | None = None
    ) -> None:
        self._failures.setdefault(method, []).append(SlackRejection(error, status, retry_after))

    def calls_of(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method]

    def accepted_calls_of(self, method: str) -> list[ApiCall]:
        """The calls of ``method`` Slack answered ``ok: true`` (a rejected post shows the user nothing)."""
        return [call for call in self.calls_of(method) if not any(call is bad for bad in self.rejected)]

    async def wait_for_call(self, method: str, count: int = 1, within_s: float = 10.0) -> list[ApiCall]:
        deadline = time.monotonic() + within_s
        while len(self.calls_of(method)) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method} called {len(self.calls_of(method))} times, wanted {count}")
            await asyncio.sleep(0.01)
        return self.calls_of(method)[:count]

    async def push_socket_event(self, body: Json, within_s: float = 10.0) -> str:
        """Send ``body`` over the Socket Mode websocket as an ``events_api`` envelope; wait for its ack."""
        deadline = time.monotonic() + within_s
        while not self._sockets:
            if time.monotonic() > deadline:
                raise TimeoutError("no Socket Mode connection")
            await asyncio.sleep(0.01)
        envelope_id = f"env-{body['event_id']}"
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
            "payload": body,
        }
        await self._sockets[-1].send_str(json.dumps(envelope))
        while envelope_id not in self.acks:
            if time.monotonic() > deadline:
                raise TimeoutError(f"envelope {envelope_id} was not acked")
            await asyncio.sleep(0.01)
        return envelope_id

    # -- the API ---------------------------------------------------------------------------------------

    async def _endpoint(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: Json = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        elif request.can_read_body:
            params.update(parse_qsl(await request.text(), keep_blank_values=True))
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        call = ApiCall(method, params, token)
        self.calls.append(call)
        headers: dict[str, str] = {}
        try:
            if method == "apps.connections.open":
                allowed = {self.app_token}
            else:
                allowed = {self.bot_token, *self.team_tokens.values()}
            if token not in allowed:
                raise SlackRejection("invalid_auth")
            failures = self._failures.get(method)
            if failures:
                raise failures.pop(0)
            handler = getattr(self, "_api_" + method.replace(".", "_"), None)
            if handler is None:
                raise SlackRejection("unknown_method", 404)
            body: Json = {"ok": True, **handler(params)}
            status = 200
        except SlackRejection as rejection:
            self.rejected.append(call)
            body, status = {"ok": False, "error": rejection.error}, rejection.status
            if rejection.retry_after is not None:
                headers["Retry-After"] = str(rejection.retry_after)
        return web.Response(
            text=json.dumps(body), status=status, content_type="application/json", headers=headers
        )

    def _api_auth_test(self, params: Json) -> Json:
        return {
            "url": "https://fake.slack.com/",
            "team": "Fake team",
            "user": "mnemo",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
        }

    @staticmethod
    def _checked_text(params: Json, limit: int) -> str:
        text = str(params.get("text", ""))
        visible = slack_mrkdwn_text(text)
        if not visible.strip():
            raise SlackRejection("no_text")
        if len(text) > limit:
            raise SlackRejection("msg_too_long")
        return text

    def _api_chat_postMessage(self, params: Json) -> Json:
        text, ts = self._checked_text(params, POST_LIMIT), self.next_ts()
        message: Json = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "text": text,
            "ts": ts,
        }
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        return {"channel": params["channel"], "ts": ts, "message": message}

    def _api_chat_update(self, params: Json) -> Json:
        text = self._checked_text(params, UPDATE_LIMIT)
        return {"channel": params["channel"], "ts": params["ts"], "text": text, "message": {"text": text}}

    def _api_conversations_replies(self, params: Json) -> Json:
        return {"messages": [], "has_more": False}

    def _api_apps_connections_open(self, params: Json) -> Json:
        return {"url": f"ws://127.0.0.1:{self.port}/link"}

    async def _socket_mode(self, request: web.Request) -> web.WebSocketResponse:
        connection = web.WebSocketResponse()
        await connection.prepare(request)
        self._sockets.append(connection)
        hello = {
            "type": "hello",
            "num_connections": 1,
            "connection_info": {"app_id": "A0001"},
            "debug_info": {"host": "fake", "approximate_connection_time": 3600},
        }
        await connection.send_str(json.dumps(hello))
        async for frame in connection:
            if frame.type == WSMsgType.TEXT:
                envelope_id = json.loads(frame.data).get("envelope_id")
                if envelope_id:
                    self.acks.append(str(envelope_id))
        if connection in self._sockets:
            self._sockets.remove(connection)
        return connection
