"""A fake Discord (REST API + gateway websocket) on 127.0.0.1 that a real discord.py client talks to.

It owns: the bot's identity, one guild with a text channel and an active thread, the gateway script
(HELLO, heartbeat ACKs, READY and GUILD_CREATE after IDENTIFY, then whatever the test dispatches), a log of
every channel's messages (users' messages dispatched or only ``post``-ed while the bot was away, and the
bot's own) served by ``GET /channels/{id}/messages`` as Discord pages it, a record of every REST call
(its arrival time, and whether it was refused), each channel's ``last_message_id``, history answers held
back on request (``hold_history``, a slow Discord), THREAD_CREATE for a thread the bot starts when asked,
Discord's content rules on sent messages (over 2,000 characters is the real 50035 error; unbalanced code
fences are rejected here too, so a broken chunk fails loudly) and one-shot injected failures
(``fail_next``), e.g. a 429 with ``retry_after`` and a ``Via`` header as Cloudflare sends it. Responses
carry exactly ``Content-Type: application/json`` (discord.py compares it with ==).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import socket
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from aiohttp import WSMsgType, web

from tests.adapters.fakes.discord_payloads import (
    TIMESTAMP,
    Json,
    bot_message_payload,
    guild_payload,
    replay_message,
    text_channel_payload,
    thread_payload,
    user_payload,
)

__all__ = ["ApiRejection", "Call", "FakeDiscordServer", "Json", "discord_content", "guild_payload",
           "replay_message", "user_payload"]  # fmt: skip

TEXT_LIMIT = 2000
_DISCORD_EPOCH_MS = 1420070400000
_FENCE = re.compile(r"(?<!\\)```")


class ApiRejection(Exception):
    """A Discord REST error answer."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def discord_content(text: str) -> str:
    """``text`` if Discord would show it as its author meant; ``ApiRejection`` otherwise."""
    if len(text) > TEXT_LIMIT:
        raise ApiRejection(
            400, 50035, f"Invalid Form Body: content: Must be {TEXT_LIMIT} or fewer in length."
        )
    if not text.strip():
        raise ApiRejection(400, 50006, "Cannot send an empty message")
    if len(_FENCE.findall(text)) % 2:
        raise ApiRejection(400, 0, "fake: unbalanced code fence (the chunk would render broken)")
    return text


@dataclass(frozen=True)
class Call:
    """One REST request the client made: a route name, the channel it targets, its JSON body."""

    route: str
    channel_id: int
    body: Json
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)  # when it arrived, to measure waits between calls


@dataclass
class FakeDiscordServer:
    """REST under ``/api/v10`` and the gateway at ``/gateway`` on one loopback port."""

    token: str = "MTIz.FAKE-DISCORD.TOKEN-do-not-log"
    bot_id: int = 900000000000000001
    guild_id: int = 800000000000000001
    channel_id: int = 800000000000000100
    thread_id: int = 800000000000000200
    calls: list[Call] = field(default_factory=list)
    fail_next: dict[str, list[tuple[int, Json, dict[str, str]]]] = field(default_factory=dict)
    identified: list[Json] = field(default_factory=list)
    resumed: int = 0
    refuse_connections: bool = False
    refuse_resumes: bool = False  # answer RESUME with INVALID_SESSION: the client must IDENTIFY afresh
    announce_threads: bool = False  # dispatch THREAD_CREATE for a thread the bot starts, as Discord does
    hold_history: asyncio.Event | None = None  # history pages are read at once but answered once it is set
    refused: list[Call] = field(default_factory=list)  # the calls answered with an error (429, 400, ...)
    channel_log: dict[int, list[Json]] = field(default_factory=dict)
    by_nonce: dict[str, Json] = field(default_factory=dict)  # the bot's messages by the nonce they carried
    dm_users: dict[int, Json] = field(default_factory=dict)
    port: int = 0
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(2))
    _ids: itertools.count[int] = field(default_factory=itertools.count)
    _runner: web.AppRunner | None = None

    @property
    def bot(self) -> Json:
        return user_payload(self.bot_id, "mnemo", bot=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def snowflake(self) -> int:
        return ((int(time.time() * 1000) - _DISCORD_EPOCH_MS) << 22) + next(self._ids) % 4096

    # -- lifecycle -------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        app = web.Application()
        api = "/api/v10"
        app.router.add_get(f"{api}/users/@me", self._me)
        app.router.add_get(f"{api}/oauth2/applications/@me", self._application)
        app.router.add_post(f"{api}/channels/{{cid}}/messages", self._create_message)
        app.router.add_get(f"{api}/channels/{{cid}}", self._get_channel)
        app.router.add_get(f"{api}/channels/{{cid}}/messages", self._get_messages)
        app.router.add_patch(f"{api}/channels/{{cid}}/messages/{{mid}}", self._edit_message)
        app.router.add_post(f"{api}/channels/{{cid}}/typing", self._typing)
        app.router.add_post(f"{api}/channels/{{cid}}/messages/{{mid}}/threads", self._start_thread)
        app.router.add_get("/gateway", self._gateway)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- gateway ---------------------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self.refuse_connections:
            return web.Response(status=503)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                break
            payload = json.loads(frame.data)
            if payload["op"] == 1:
                await ws.send_str(json.dumps({"op": 11}))
            elif payload["op"] == 2:
                self.identified.append(payload["d"])
                await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": 1, "d": self._ready()}))
                guild = guild_payload(self.guild_id, self.bot, self.channel_id, self.thread_id)
                await ws.send_str(
                    json.dumps({"op": 0, "t": "GUILD_CREATE", "s": next(self._seq), "d": guild})
                )
                self._sockets.append(ws)
            elif payload["op"] == 6 and self.refuse_resumes:
                await ws.send_str(json.dumps({"op": 9, "d": False}))
            elif payload["op"] == 6:
                self.resumed += 1
                await ws.send_str(json.dumps({"op": 0, "t": "RESUMED", "s": next(self._seq), "d": {}}))
                self._sockets.append(ws)
        if ws in self._sockets:
            self._sockets.remove(ws)
        return ws

    async def drop_connections(self) -> None:
        """Close every gateway connection as a network blip would (the client resumes)."""
        for ws in list(self._sockets):
            await ws.close(code=4000, message=b"unknown error")

    def _ready(self) -> Json:
        return {
            "v": 10, "user": self.bot, "session_id": "fake-session", "resume_gateway_url": self.gateway_url,
            "guilds": [{"id": str(self.guild_id), "unavailable": True}], "private_channels": [],
            "application": {"id": str(self.bot_id), "flags": 0}, "shard": [0, 1],
        }  # fmt: skip

    async def dispatch(self, event: str, data: Json) -> None:
        """Send one gateway DISPATCH (e.g. MESSAGE_CREATE, then also kept in its channel's log) to every
        identified connection."""
        if event == "MESSAGE_CREATE":
            self._keep(data)
        for ws in list(self._sockets):
            await ws.send_str(json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data}))

    async def post(self, data: Json, *, deliver: bool = True) -> None:
        """A user posts ``data`` (a ``message`` payload); with ``deliver=False`` the bot is not told (it was
        away), so only its channel's history shows it."""
        if deliver:
            await self.dispatch("MESSAGE_CREATE", data)
        else:
            self._keep(data)

    def _keep(self, data: Json) -> None:
        channel_id = int(data["channel_id"])
        log = self.channel_log.setdefault(channel_id, [])
        if all(kept["id"] != data["id"] for kept in log):  # a re-delivery is the same message
            log.append(data)
        if "guild_id" not in data and not data["author"].get("bot"):
            self.dm_users.setdefault(channel_id, data["author"])

    @property
    def connections(self) -> int:
        """How many gateway connections are open (identified or resumed)."""
        return len(self._sockets)

    async def wait_until_identified(self, within_s: float = 10.0) -> None:
        deadline = time.monotonic() + within_s
        while not self._sockets:
            if time.monotonic() > deadline:
                raise TimeoutError("no discord client identified")
            await asyncio.sleep(0.01)

    def message(
        self,
        author: Json,
        content: str,
        *,
        channel_id: int | None = None,
        guild: bool = True,
        mention_bot: bool = False,
        reply_to: Json | None = None,
        message_id: int | None = None,
    ) -> Json:
        """A MESSAGE_CREATE payload; a DM when ``guild`` is False (then ``channel_id`` is the DM channel)."""
        if mention_bot:
            content = f"<@{self.bot_id}> {content}"
        data: Json = {
            "id": str(message_id or self.snowflake()), "channel_id": str(channel_id or self.channel_id),
            "author": author, "content": content, "timestamp": TIMESTAMP, "edited_timestamp": None,
            "tts": False, "mention_everyone": False, "mentions": [self.bot] if mention_bot else [],
            "mention_roles": [], "attachments": [], "embeds": [], "pinned": False,
            "type": 19 if reply_to else 0, "flags": 0,
        }  # fmt: skip
        if guild:
            data["guild_id"] = str(self.guild_id)
            data["member"] = {"roles": [], "joined_at": TIMESTAMP, "deaf": False, "mute": False, "flags": 0}
        if reply_to is not None:
            data["message_reference"] = {"message_id": reply_to["id"], "channel_id": reply_to["channel_id"]}
            data["referenced_message"] = reply_to
        return data

    # -- REST ------------------------------------------------------------------------------------------

    @staticmethod
    def _json(payload: object, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
        # discord.py parses a body as JSON only when Content-Type is exactly application/json.
        response = web.Response(text=json.dumps(payload), status=status, headers=headers)
        response.headers["Content-Type"] = "application/json"
        return response

    async def _record(self, route: str, request: web.Request) -> Call | web.Response:
        body = await request.json() if request.can_read_body else dict(request.query)
        call = Call(route, int(request.match_info.get("cid", 0)), body, dict(request.headers))
        self.calls.append(call)
        pending = self.fail_next.get(route)
        if pending:
            status, payload, headers = pending.pop(0)
            self.refused.append(call)
            return self._json(payload, status, headers)
        return call

    async def _me(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return self._json({"message": "401: Unauthorized", "code": 0}, 401)
        return self._json(self.bot)

    async def _application(self, request: web.Request) -> web.Response:
        return self._json({"id": str(self.bot_id), "name": "mnemo", "icon": None, "description": "",
                           "bot_public": False, "bot_require_code_grant": False, "verify_key": "00",
                           "owner": user_payload(42, "owner"), "flags": 0, "team": None})  # fmt: skip

    def _sent_message(self, channel_id: int, content: str, message_id: int | None = None) -> Json:
        return bot_message_payload(self.bot, message_id or self.snowflake(), channel_id, content)

    async def _create_message(self, request: web.Request) -> web.Response:
        call = await self._record("create_message", request)
        if isinstance(call, web.Response):
            return call
        try:
            content = discord_content(call.body.get("content") or "")
        except ApiRejection as exc:
            self.refused.append(call)
            return self._json({"message": exc.message, "code": exc.code}, exc.status)
        nonce = call.body.get("nonce")
        if nonce is not None and call.body.get("enforce_nonce") and str(nonce) in self.by_nonce:
            # Discord: "If another message was created by the same author with the same nonce, that
            # message will be returned and no new message will be created."
            return self._json(self.by_nonce[str(nonce)])
        sent = self._sent_message(call.channel_id, content)
        if nonce is not None:
            sent["nonce"] = str(nonce)
            self.by_nonce[str(nonce)] = sent
        self._keep(sent)
        return self._json(sent)

    async def _get_channel(self, request: web.Request) -> web.Response:
        call = await self._record("get_channel", request)
        if isinstance(call, web.Response):
            return call
        last = self._last_message_id(call.channel_id)
        if call.channel_id == self.channel_id:
            channel = text_channel_payload(self.guild_id, self.channel_id)
            return self._json({**channel, "last_message_id": last})
        if call.channel_id == self.thread_id:
            thread = thread_payload(self.guild_id, self.channel_id, self.thread_id)
            return self._json({**thread, "last_message_id": last})
        if call.channel_id in self.dm_users:
            return self._json({"id": str(call.channel_id), "type": 1, "last_message_id": last,
                               "recipients": [self.dm_users[call.channel_id]]})  # fmt: skip
        return self._json({"message": "Unknown Channel", "code": 10003}, 404)

    async def _get_messages(self, request: web.Request) -> web.Response:
        """Discord's paging: the ``limit`` (at most 100) messages right after ``after`` (else right before
        ``before``, else the newest), always answered newest first."""
        call = await self._record("get_messages", request)
        answer = call if isinstance(call, web.Response) else self._json(self._page(call)[::-1])
        if self.hold_history is not None:  # the answer was made on arrival, as Discord would
            await self.hold_history.wait()
        return answer

    def _page(self, call: Call) -> list[Json]:
        limit = max(1, min(100, int(call.body.get("limit", 50))))
        after, before = int(call.body.get("after", 0)), int(call.body.get("before", 1 << 63))
        log = sorted(self.channel_log.get(call.channel_id, []), key=lambda kept: int(kept["id"]))
        window = [kept for kept in log if after < int(kept["id"]) < before]
        return window[:limit] if "after" in call.body else window[-limit:]

    def bot_messages(self, channel_id: int) -> list[str]:
        """What the bot said in the channel, as people there see it (a send Discord deduplicated by its
        nonce shows once)."""
        return [
            str(m.get("content", "")) for m in self.channel_log.get(channel_id, []) if m["author"].get("bot")
        ]

    def _last_message_id(self, channel_id: int) -> str | None:
        """As Discord reports it on the channel: the id of its newest message, anyone's."""
        log = self.channel_log.get(channel_id, [])
        return str(max(int(kept["id"]) for kept in log)) if log else None

    async def _edit_message(self, request: web.Request) -> web.Response:
        call = await self._record("edit_message", request)
        if isinstance(call, web.Response):
            return call
        content = call.body.get("content") or ""
        return self._json(self._sent_message(call.channel_id, content, int(request.match_info["mid"])))

    async def _typing(self, request: web.Request) -> web.Response:
        call = await self._record("typing", request)
        return call if isinstance(call, web.Response) else web.Response(status=204)

    async def _start_thread(self, request: web.Request) -> web.Response:
        call = await self._record("start_thread", request)
        if isinstance(call, web.Response):
            return call
        thread_id = request.match_info["mid"]  # Discord gives a message's thread the message's id
        thread = {"id": thread_id, "type": 11, "parent_id": str(call.channel_id),
                  "guild_id": str(self.guild_id), "name": call.body.get("name", ""), "owner_id":
                  str(self.bot_id), "message_count": 0, "member_count": 1,
                  "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                      "locked": False, "archive_timestamp": TIMESTAMP},
                  }  # fmt: skip
        if self.announce_threads:  # so the client knows the thread (and its owner) when messages arrive in it
            await self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return self._json(thread)

    def calls_to(self, route: str) -> list[Call]:
        return [call for call in self.calls if call.route == route]

    def accepted(self, route: str) -> list[Call]:
        """The calls of ``route`` that succeeded (not in ``refused``)."""
        return [call for call in self.calls_to(route) if all(call is not no for no in self.refused)]

    async def wait_for_call(self, route: str, count: int = 1, within_s: float = 10.0) -> list[Call]:
        deadline = time.monotonic() + within_s
        while len(self.calls_to(route)) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"expected {count} {route} calls, got {len(self.calls_to(route))}")
            await asyncio.sleep(0.01)
        return self.calls_to(route)

    def rate_limit_next(self, route: str, retry_after: float, times: int = 1) -> None:
        """The next ``times`` calls of ``route`` answer 429 as Discord (behind Cloudflare) does."""
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": False}
        headers = {"Via": "1.1 google", "Retry-After": str(retry_after), "X-RateLimit-Scope": "user"}
        self.fail_next.setdefault(route, []).extend([(429, body, headers)] * times)
