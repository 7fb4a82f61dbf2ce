"""The web chat's page, its assets and its JSON/SSE message API: one live conversation per browser cookie.

``POST /api/chat/messages`` hands the message to the web adapter (durably accepted before it answers 200, or
refused with 429 + Retry-After / 403 and not stored); ``GET /api/chat/messages`` returns the chat window
from storage (no ``after``: the live conversation's transcript plus the commands, command replies and
notices sent to this browser since it became live) or waits for new items (long poll); ``GET
/api/chat/stream`` pushes items as server-sent events — replies, a streamed reply growing (the same ``id``
again, to replace), and the turn's activity (the long poll gives whole replies only). Every item carries
``html``: sanitised HTML rendered on the server (``gateway.webchat.rendering``), never Markdown for the page
to interpret. The page, its script and style ship in the package and are served with a
Content-Security-Policy that allows no inline script, no remote source and no frame. The cookie is random,
HttpOnly and SameSite=Lax, and it is a secret: the browser's account (and chat id, session keys, event ids)
is the cookie's keyed hash (``ClientKey.web_account``), so nothing stored, shown or logged contains it; a
malformed cookie is replaced rather than trusted. A message from a browser the gateway has never seen first
spends a token of its client address's ``rate_limit.new_web_persons`` bucket, so one address cannot mint
persons.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import time
from collections.abc import AsyncIterator
from importlib import resources

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, StreamingResponse
from pydantic import BaseModel, Field

from gateway.access import NewPersonBudget
from gateway.contracts import AdapterError
from gateway.http.webchat_person_routes import person_router
from gateway.identity import ClientKey
from gateway.sessions import KeyScope, SessionKey
from gateway.storage.admin_reads import AdminReads, MessageRow
from gateway.storage.chat_conversations import ChatWindow, CommandNotice
from gateway.storage.chat_refs import chat_to_text
from gateway.webchat import (
    ChannelNotStartedError,
    Cursor,
    Delivery,
    MessageRefusedError,
    WebChatAdapter,
)
from gateway.webchat.browser import BrowserChat
from gateway.webchat.person_services import PersonServices
from gateway.webchat.rendering import plain_html, render_html

COOKIE = "mnemogate_chat"
_COOKIE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_COOKIE_MAX_AGE = 365 * 24 * 3600
_MAX_WAIT = 60.0
_HISTORY_LIMIT = 200
_STREAM_HEARTBEAT = 15.0
_STREAM_LIFETIME = 3600.0  # the browser's EventSource reconnects; bounded streams free server resources
_PARTIAL = frozenset({"stream", "activity"})
"""Feed kinds the long poll leaves out: snapshots of a reply still being written, and the turn's activity."""
_ASSETS = {
    "chat.js": "text/javascript; charset=utf-8",
    "chat.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: even HTML that slipped past the sanitiser could not run script,
load anything remote or be framed."""
_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": PAGE_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class PostedMessage(BaseModel):
    text: str = Field(min_length=1, max_length=20_000)
    client_message_id: str | None = Field(default=None, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")


def _asset(name: str) -> str:
    return resources.files("gateway.webchat").joinpath(name).read_text(encoding="utf-8")


def _cookie(request: Request, response: Response) -> str:
    """The browser's cookie, minting and setting a new one when absent or malformed."""
    current = request.cookies.get(COOKIE, "")
    if _COOKIE_PATTERN.match(current):
        return current
    cookie = secrets.token_urlsafe(24)
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=_COOKIE_MAX_AGE,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return cookie


def retry_after(seconds: float | None) -> dict[str, str]:
    """The ``Retry-After`` header for a wait of ``seconds`` (whole seconds, at least 1)."""
    return {"Retry-After": str(max(1, math.ceil(seconds or 1.0)))}


def refusal(exc: MessageRefusedError) -> HTTPException:
    """A refused message as HTTP: 429 with Retry-After when rate-limited, else 403."""
    if exc.reason == "rate_limited":
        return HTTPException(429, str(exc), headers=retry_after(exc.retry_after_s))
    return HTTPException(403, str(exc))


def _history_item(row: MessageRow) -> dict[str, object]:
    text = row.content or ""
    html = plain_html(text) if row.role == "user" else render_html(text)
    kind = "message" if row.role == "user" else "reply"
    return {"id": f"m{row.id}", "role": row.role, "kind": kind, "text": text, "html": html,
            "at": row.created_at}  # fmt: skip


def _notice_items(found: CommandNotice) -> list[dict[str, object]]:
    notice = found.notice
    # Named as its delivery is (``<outbox key>#0``), so a notice read here and streamed too shows once.
    name = f"{found.key}#0" if found.key else f"n{notice.id}"
    items: list[dict[str, object]] = []
    if found.request_text:
        text = found.request_text
        items.append(
            {"id": f"c:{name}", "role": "user", "kind": "command", "text": text,
             "html": plain_html(text), "at": notice.created_at}
        )  # fmt: skip
    items.append(
        {"id": name, "role": "assistant", "kind": "notice", "text": notice.text,
         "html": render_html(notice.text), "at": notice.created_at}
    )  # fmt: skip
    return items


def window_items(window: ChatWindow) -> list[dict[str, object]]:
    """A chat window as page items, in time order (a command just before its reply), the newest kept."""
    items = [_history_item(row) for row in window.transcript]
    for notice in window.notices:
        items.extend(_notice_items(notice))
    items.sort(key=lambda item: float(str(item["at"])))  # stable: a command stays before its reply
    return items[-_HISTORY_LIMIT:]


def webchat_router(
    adapter: WebChatAdapter,
    *,
    client_key: ClientKey | None = None,
    new_persons: NewPersonBudget | None = None,
    reads: AdminReads | None = None,
    people: PersonServices | None = None,
) -> APIRouter:
    """Routes for the page and its API, bound to ``adapter``.

    ``client_key`` is the deployment's key (``ClientKey.for_deployment``; without it, a key for this
    process only, so accounts change on restart); ``new_persons`` the ``rate_limit.new_web_persons``
    budget over the identity repository (without it, the default budget, counting every browser as new);
    ``people`` serves the chat window, conversations, search and memory (without it, ``reads`` serves the
    window alone).
    """
    router = APIRouter()
    feed = adapter.feed
    key = client_key or ClientKey.ephemeral()
    newcomers = new_persons or NewPersonBudget(None)
    renders_html = isinstance(adapter, BrowserChat)

    def _chat_id(request: Request, response: Response) -> str:
        """The browser's chat id: its cookie's keyed hash (the cookie itself goes no further)."""
        return key.web_account(_cookie(request, response))

    def _item(delivery: Delivery, cursor: str) -> dict[str, object]:
        if delivery.kind == "activity":
            body = json.loads(delivery.text)
            return {"id": delivery.receipt_id, "type": "activity", **body, "cursor": cursor}
        html = delivery.text if renders_html else render_html(delivery.text)
        return {"id": delivery.receipt_id, "role": "assistant", "kind": delivery.kind, "html": html,
                "at": delivery.at, "cursor": cursor}  # fmt: skip

    async def history(chat_id: str) -> tuple[str | None, list[dict[str, object]]]:
        chat_ref = chat_to_text(adapter.chat_ref(chat_id))
        if people is not None:
            window = await people.window(chat_id, chat_ref, _HISTORY_LIMIT)
            return window.conversation_id, window_items(window)
        if reads is None:
            return None, []
        prefix = SessionKey(platform=adapter.name, scope=KeyScope.DM, chat_id=chat_id).to_string()
        old = await reads.chat_history(prefix.rsplit(":", 2)[0] + ":", chat_ref, limit=_HISTORY_LIMIT)
        notices = tuple(CommandNotice(notice, None) for notice in old.notices)
        return old.conversation_id, window_items(ChatWindow(old.conversation_id, old.transcript, notices))

    @router.get("/", response_class=HTMLResponse)
    async def page(request: Request) -> HTMLResponse:
        response = HTMLResponse(_asset("page.html"), headers=_PAGE_HEADERS)
        _chat_id(request, response)
        return response

    @router.get("/static/{name}")
    async def asset(name: str) -> Response:
        if name not in _ASSETS:
            raise HTTPException(404, "not found")
        headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        return Response(_asset(name), media_type=_ASSETS[name], headers=headers)

    @router.get("/favicon.ico")
    async def favicon() -> Response:
        return Response(_asset("favicon.svg"), media_type=_ASSETS["favicon.svg"])

    @router.post("/api/chat/messages")
    async def post_message(body: PostedMessage, request: Request, response: Response) -> dict[str, object]:
        chat_id = _chat_id(request, response)
        client = request.client.host if request.client else None
        admitted = await newcomers.check(adapter.name, chat_id, client)
        if not admitted.allowed:
            raise HTTPException(
                429,
                "Too many new chats were started from your address; please try again later.",
                headers=retry_after(admitted.retry_after_s),
            )
        try:
            event_id = await adapter.submit(chat_id, body.text, body.client_message_id)
        except ChannelNotStartedError as exc:
            raise HTTPException(503, str(exc)) from exc
        except MessageRefusedError as exc:
            raise refusal(exc) from exc
        except AdapterError as exc:
            raise HTTPException(503, f"the message could not be accepted: {exc}") from exc
        return {"accepted": True, "event_id": event_id}

    @router.get("/api/chat/messages")
    async def get_messages(
        request: Request,
        response: Response,
        after: str | None = None,
        wait: float = Query(default=0.0, ge=0.0),
    ) -> dict[str, object]:
        chat_id = _chat_id(request, response)
        if after is None:
            # Cursor before history: a reply racing the read may show twice, never zero times.
            cursor = feed.position().to_string()
            conversation_id, items = await history(chat_id)
            return {"messages": items, "cursor": cursor, "conversation_id": conversation_id}
        found = await feed.wait(chat_id, Cursor.parse(after), min(wait, _MAX_WAIT))
        cursor = Cursor(feed.epoch, found[-1].seq).to_string() if found else _resume(after, feed.epoch)
        # Whole items only: a streamed reply is here once it is a "reply"; activity is for the stream.
        items = [_item(d, Cursor(feed.epoch, d.seq).to_string()) for d in found if d.kind not in _PARTIAL]
        return {"messages": items, "cursor": cursor}

    @router.get("/api/chat/stream")
    async def stream(request: Request, after: str | None = None) -> StreamingResponse:
        cookie_holder = Response()
        chat_id = _chat_id(request, cookie_holder)
        response = StreamingResponse(
            # EventSource reconnects with the first URL; its Last-Event-ID header is the newer position.
            _events(request, chat_id, request.headers.get("last-event-id") or after),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
        for name, value in cookie_holder.raw_headers:
            if name == b"set-cookie":
                response.raw_headers.append((name, value))
        return response

    async def _events(request: Request, chat_id: str, after: str | None) -> AsyncIterator[str]:
        cursor = Cursor.parse(after) or feed.position()
        deadline = time.monotonic() + _STREAM_LIFETIME
        yield "retry: 2000\n\n"
        while time.monotonic() < deadline and not feed.closed:
            if await request.is_disconnected():
                return
            items = await feed.wait(chat_id, cursor, _STREAM_HEARTBEAT)
            if not items:
                yield ": keep-alive\n\n"
                continue
            for delivery in items:
                cursor = Cursor(feed.epoch, delivery.seq)
                data = json.dumps(_item(delivery, cursor.to_string()))
                yield f"id: {cursor.to_string()}\ndata: {data}\n\n"

    if people is not None:
        router.include_router(person_router(people, _chat_id))
    return router


def _resume(after: str, epoch: str) -> str:
    """The cursor to hand back when nothing arrived: the same one, unless it was from another epoch."""
    parsed = Cursor.parse(after)
    return after if parsed is not None and parsed.epoch == epoch else Cursor(epoch, 0).to_string()
