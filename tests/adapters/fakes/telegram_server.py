"""A fake Telegram Bot API on 127.0.0.1 that real python-telegram-bot clients talk to over HTTP.

It owns: pending updates with Telegram's confirmation semantics (``getUpdates`` with ``offset`` forgets
every update below it; long polling waits up to ``timeout``), a record of every call and of each
successful answer (``answered``), Telegram-HTML validation of ``parse_mode=HTML`` texts (unknown or
unbalanced tags and bare ``<``/``&`` give the real "can't parse entities" 400; texts over 4,096 UTF-16
units give "message is too long"), and one-shot injected failures (``fail_next``), e.g. a 429 with
``retry_after``. Wire format as PTB sends it: form fields whose non-string values are JSON-encoded.
"""

from __future__ import annotations

import asyncio
import html
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

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

Json = dict[str, Any]
_ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "blockquote",
                 "tg-spoiler", "span", "tg-emoji"}  # fmt: skip
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*)?)>")
_BARE_AMP = re.compile(r"&(?!(?:lt|gt|amp|quot|#\d+|#x[0-9A-Fa-f]+);)")
TEXT_LIMIT = 4096
_STRING_FIELDS = frozenset({"text", "parse_mode", "url", "secret_token", "caption", "action"})


class ApiRejection(Exception):
    """A Bot API error answer: HTTP status, description and optional ``parameters``."""

    def __init__(self, status: int, description: str, parameters: Json | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def telegram_html_text(source: str) -> str:
    """The visible text of a Telegram-HTML message; ``ApiRejection`` as Telegram would reject it."""
    stack: list[str] = []
    out: list[str] = []
    position = 0
    for match in _TAG.finditer(source):
        out.append(source[position : match.start()])
        position = match.end()
        closing, name = match.group(1) == "/", match.group(2).lower()
        if name not in _ALLOWED_TAGS:
            raise ApiRejection(400, f'Bad Request: can\'t parse entities: Unsupported start tag "{name}"')
        if not closing:
            stack.append(name)
        elif not stack or stack.pop() != name:
            raise ApiRejection(400, f'Bad Request: can\'t parse entities: Unmatched end tag "{name}"')
    out.append(source[position:])
    if stack:
        raise ApiRejection(400, f"Bad Request: can't parse entities: Can't find end tag \"{stack[-1]}\"")
    text = "".join(out)
    if "<" in text or ">" in text or _BARE_AMP.search(text):
        raise ApiRejection(400, "Bad Request: can't parse entities: unescaped character in text")
    return html.unescape(text)


@dataclass(frozen=True)
class ApiCall:
    """One Bot API request as the fake received it (form fields JSON-decoded)."""

    method: str
    params: Mapping[str, Any]
    at: float


@dataclass(frozen=True)
class ApiAnswer:
    """One Bot API call the fake answered successfully, with the ``result`` it returned."""

    call: ApiCall
    result: Any


# -- update builders (Bot API JSON) --------------------------------------------------------------------


def tg_user(user_id: int, first_name: str, username: str | None = None, *, is_bot: bool = False) -> Json:
    user: Json = {"id": user_id, "is_bot": is_bot, "first_name": first_name}
    if username:
        user["username"] = username
    return user


def private_chat(user: Json) -> Json:
    return {"id": user["id"], "type": "private", "first_name": user["first_name"]}


def group_chat(chat_id: int, title: str, *, forum: bool = False) -> Json:
    chat: Json = {"id": chat_id, "type": "supergroup" if forum else "group", "title": title}
    if forum:
        chat["is_forum"] = True
    return chat


def mention_entities(text: str, username: str) -> list[Json]:
    """``mention`` entities for each ``@username`` in ``text``, with Telegram's UTF-16 offsets."""
    needle = f"@{username}"
    found, start = [], text.find(needle)
    while start >= 0:
        found.append({"type": "mention", "offset": utf16_len(text[:start]), "length": utf16_len(needle)})
        start = text.find(needle, start + len(needle))
    return found


@dataclass
class FakeTelegramServer:
    """The fake Bot API; ``async with FakeTelegramServer() as fake`` serves it on a free loopback port."""

    token: str = "123456:TEST-TOKEN"
    bot: Json = field(default_factory=lambda: tg_user(123456, "Mnemo", "mnemo_bot", is_bot=True))
    calls: list[ApiCall] = field(default_factory=list)
    answers: list[ApiAnswer] = field(default_factory=list)
    webhook_url: str = ""
    _pending: list[Json] = field(default_factory=list)
    _failures: dict[str, list[ApiRejection]] = field(default_factory=dict)
    _update_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))
    _message_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _chats: dict[int, Json] = field(default_factory=dict)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _closing: bool = False
    _server: uvicorn.Server | None = None
    _task: asyncio.Task[None] | None = None
    port: int = 0

    # -- lifecycle -------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", self.port))  # a given port lets a test bring Telegram up late
        self.port = sock.getsockname()[1]
        app = Starlette(routes=[Route("/bot{token}/{method}", self._endpoint, methods=["GET", "POST"])])
        config = uvicorn.Config(app, lifespan="off", log_level="warning", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        deadline = time.monotonic() + 10
        while not self._server.started:
            if self._task.done() or time.monotonic() > deadline:
                raise RuntimeError("fake Telegram server did not start")
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._closing = True
        self._arrived.set()
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task

    @property
    def api_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def file_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    # -- scripting -------------------------------------------------------------------------------------

    def push(self, update: Json) -> int:
        """Queue an update for the bot (assigning ``update_id`` if absent); returns its id."""
        update = dict(update)
        update.setdefault("update_id", next(self._update_ids))
        message = update.get("message")
        if isinstance(message, dict):
            self._chats[message["chat"]["id"]] = message["chat"]
        self._pending.append(update)
        self._pending.sort(key=lambda u: int(u["update_id"]))
        self._arrived.set()
        return int(update["update_id"])

    def message_update(
        self,
        chat: Json,
        user: Json,
        text: str,
        *,
        thread_id: int | None = None,
        reply_to: Json | None = None,
        entities: list[Json] | None = None,
    ) -> Json:
        """An ``Update`` carrying a new text message (not queued; pass it to ``push``)."""
        message: Json = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": user,
            "text": text,
        }
        if entities is None:
            entities = mention_entities(text, str(self.bot.get("username", "")))
        if entities:
            message["entities"] = entities
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        return {"update_id": next(self._update_ids), "message": message}

    def fail_next(
        self, method: str, status: int, description: str, *, retry_after: int | None = None
    ) -> None:
        """The next call of ``method`` is answered with this error instead."""
        parameters = {"retry_after": retry_after} if retry_after is not None else None
        self._failures.setdefault(method, []).append(ApiRejection(status, description, parameters))

    def clear_failures(self) -> None:
        """Answer every method normally again."""
        self._failures.clear()

    @property
    def pending_update_ids(self) -> list[int]:
        """Updates Telegram still holds: not yet confirmed by a higher ``getUpdates`` offset."""
        return [int(update["update_id"]) for update in self._pending]

    def calls_of(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method]

    def answered(self, method: str) -> list[ApiAnswer]:
        """The successful calls of ``method`` (rejected and failed ones left out), in arrival order."""
        return [answer for answer in self.answers if answer.call.method == method]

    async def wait_for_call(self, method: str, count: int = 1, within_s: float = 10.0) -> list[ApiCall]:
        """The first ``count`` calls of ``method``, waiting (bounded) until they have happened."""
        deadline = time.monotonic() + within_s
        while len(self.calls_of(method)) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method} called {len(self.calls_of(method))} times, wanted {count}")
            await asyncio.sleep(0.01)
        return self.calls_of(method)[:count]

    # -- the API ---------------------------------------------------------------------------------------

    async def _endpoint(self, request: Request) -> JSONResponse:
        if request.path_params["token"] != self.token:
            return JSONResponse({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
        method = str(request.path_params["method"])
        params = await _params(request)
        call = ApiCall(method, params, time.time())
        self.calls.append(call)
        try:
            failures = self._failures.get(method)
            if failures:
                raise failures.pop(0)
            handler = getattr(self, f"_api_{method}", None)
            if handler is None:
                raise ApiRejection(404, "Not Found: method not found")
            result = await handler(params)
        except ApiRejection as rejection:
            body: Json = {"ok": False, "error_code": rejection.status, "description": rejection.description}
            if rejection.parameters:
                body["parameters"] = rejection.parameters
            return JSONResponse(body, rejection.status)
        self.answers.append(ApiAnswer(call, result))
        return JSONResponse({"ok": True, "result": result})

    async def _api_getMe(self, params: Json) -> Json:
        return {**self.bot, "can_join_groups": True, "can_read_all_group_messages": False,
                "supports_inline_queries": False}  # fmt: skip

    async def _api_deleteWebhook(self, params: Json) -> bool:
        self.webhook_url = ""
        if params.get("drop_pending_updates"):
            self._pending.clear()
        return True

    async def _api_setWebhook(self, params: Json) -> bool:
        self.webhook_url = str(params.get("url", ""))
        if params.get("drop_pending_updates"):
            self._pending.clear()
        return True

    async def _api_getWebhookInfo(self, params: Json) -> Json:
        return {"url": self.webhook_url, "has_custom_certificate": False,
                "pending_update_count": len(self._pending)}  # fmt: skip

    async def _api_getUpdates(self, params: Json) -> list[Json]:
        offset = int(params.get("offset") or 0)
        if offset:
            self._pending = [u for u in self._pending if int(u["update_id"]) >= offset]
        limit = int(params.get("limit") or 100)
        deadline = time.monotonic() + float(params.get("timeout") or 0)
        while not self._pending and not self._closing and time.monotonic() < deadline:
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                break
        return [] if self._closing else self._pending[:limit]

    def _message(self, params: Json, text: str) -> Json:
        chat_id = int(params["chat_id"])
        message: Json = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self._chats.get(chat_id, {"id": chat_id, "type": "private", "first_name": "someone"}),
            "from": self.bot,
            "text": text,
        }
        if params.get("message_thread_id") is not None:
            message["message_thread_id"] = int(params["message_thread_id"])
            message["is_topic_message"] = True
        return message

    @staticmethod
    def _visible_text(params: Json) -> str:
        text = str(params.get("text", ""))
        visible = telegram_html_text(text) if params.get("parse_mode") == "HTML" else text
        if not visible.strip():
            raise ApiRejection(400, "Bad Request: message text is empty")
        if utf16_len(visible) > TEXT_LIMIT:
            raise ApiRejection(400, "Bad Request: message is too long")
        return visible

    async def _api_sendMessage(self, params: Json) -> Json:
        return self._message(params, self._visible_text(params))

    async def _api_editMessageText(self, params: Json) -> Json:
        message = self._message(params, self._visible_text(params))
        message["message_id"] = int(params["message_id"])
        message["edit_date"] = int(time.time())
        return message

    async def _api_sendChatAction(self, params: Json) -> bool:
        return True


async def _params(request: Request) -> Json:
    """PTB's wire format: form fields, each non-string value JSON-encoded; JSON bodies also accepted."""
    raw: dict[str, Any] = dict(request.query_params)
    if request.headers.get("content-type", "").startswith("application/json"):
        raw.update(await request.json())
        return raw
    # PTB posts application/x-www-form-urlencoded (multipart only for uploads, which the fake does not take).
    raw.update(parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True))
    decoded: Json = {}
    for key, value in raw.items():
        try:
            plain = key in _STRING_FIELDS or not isinstance(value, str)
            decoded[key] = value if plain else json.loads(value)
        except json.JSONDecodeError:
            decoded[key] = value
    return decoded
