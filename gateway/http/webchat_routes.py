"""The web chat's page and JSON/SSE API: one conversation per browser cookie.

``POST /api/chat/messages`` hands the message to the web adapter (durably accepted before it answers
200, or refused with 429 + Retry-After / 403 and not stored); ``GET /api/chat/messages`` returns the
history from state.db (no ``after``: the live conversation plus the command replies and notices sent to
this browser since it began) or waits for new replies (long poll); ``GET /api/chat/stream`` pushes replies
as server-sent events. The cookie is random, HttpOnly and SameSite=Lax, and it is a secret: the browser's
account (and chat id, session keys, event ids) is the cookie's keyed hash (``ClientKey.web_account``),
so nothing stored, shown or logged contains it; a malformed cookie is replaced rather than trusted. A
message from a browser the gateway has never seen first spends a token of its client address's
``rate_limit.new_web_persons`` bucket, so one address cannot mint persons without bound.
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
from gateway.identity import ClientKey
from gateway.sessions import KeyScope, SessionKey
from gateway.storage.admin_reads import AdminReads, MessageRow
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import ChatNotice
from gateway.webchat import ChannelNotStartedError, Cursor, Delivery, MessageRefusedError, WebChatAdapter

COOKIE = "mnemogate_chat"
_COOKIE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_COOKIE_MAX_AGE = 365 * 24 * 3600
_MAX_WAIT = 60.0
_HISTORY_LIMIT = 200
_STREAM_HEARTBEAT = 15.0
_STREAM_LIFETIME = 3600.0  # the browser's EventSource reconnects; bounded streams free server resources


class PostedMessage(BaseModel):
    text: str = Field(min_length=1, max_length=20_000)
    client_message_id: str | None = Field(default=None, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")


def _page() -> str:
    return resources.files("gateway.webchat").joinpath("page.html").read_text(encoding="utf-8")


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


def _item(delivery: Delivery, cursor: str) -> dict[str, object]:
    return {
        "id": delivery.receipt_id,
        "role": "assistant",
        "text": delivery.text,
        "at": delivery.at,
        "cursor": cursor,
    }


def _history_item(row: MessageRow) -> dict[str, object]:
    return {"id": f"m{row.id}", "role": row.role, "text": row.content or "", "at": row.created_at}


def _notice_item(notice: ChatNotice) -> dict[str, object]:
    return {"id": f"n{notice.id}", "role": "assistant", "text": notice.text, "at": notice.created_at}


def webchat_router(
    adapter: WebChatAdapter,
    *,
    client_key: ClientKey | None = None,
    new_persons: NewPersonBudget | None = None,
    reads: AdminReads | None = None,
) -> APIRouter:
    """Routes for the page and its API, bound to ``adapter`` (and ``reads`` for history: none without it).

    ``client_key`` is the deployment's key (``ClientKey.for_deployment``; without it, a key for this
    process only, so accounts change on restart); ``new_persons`` the ``rate_limit.new_web_persons``
    budget over the identity repository (without it, the default budget, counting every browser as new).
    """
    router = APIRouter()
    feed = adapter.feed
    key = client_key or ClientKey.ephemeral()
    newcomers = new_persons or NewPersonBudget(None)

    def _chat_id(request: Request, response: Response) -> str:
        """The browser's chat id: its cookie's keyed hash (the cookie itself goes no further)."""
        return key.web_account(_cookie(request, response))

    async def history(chat_id: str) -> list[dict[str, object]]:
        """The live conversation's transcript with the command replies and notices sent since it began."""
        if reads is None:
            return []
        key = SessionKey(platform=adapter.name, scope=KeyScope.DM, chat_id=chat_id).to_string()
        # Any key for this browser chat (whatever per-user/thread parts the gateway adds) shares the prefix.
        prefix = key.rsplit(":", 2)[0] + ":"
        # The tip segment and the notices since it began; after an end (/new elsewhere, an admin reset,
        # expiry) only the notices that came after it.
        window = await reads.chat_history(
            prefix, chat_to_text(adapter.chat_ref(chat_id)), limit=_HISTORY_LIMIT
        )
        items = [_history_item(row) for row in window.transcript]
        items.extend(_notice_item(notice) for notice in window.notices)
        items.sort(key=lambda item: float(str(item["at"])))
        return items[-_HISTORY_LIMIT:]

    @router.get("/", response_class=HTMLResponse)
    async def page(request: Request) -> HTMLResponse:
        response = HTMLResponse(_page(), headers={"Cache-Control": "no-store"})
        _chat_id(request, response)
        return response

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
            return {"messages": await history(chat_id), "cursor": cursor}
        items = await feed.wait(chat_id, Cursor.parse(after), min(wait, _MAX_WAIT))
        cursor = Cursor(feed.epoch, items[-1].seq).to_string() if items else _resume(after, feed.epoch)
        return {
            "messages": [_item(d, Cursor(feed.epoch, d.seq).to_string()) for d in items],
            "cursor": cursor,
        }

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

    return router


def _resume(after: str, epoch: str) -> str:
    """The cursor to hand back when nothing arrived: the same one, unless it was from another epoch."""
    parsed = Cursor.parse(after)
    return after if parsed is not None and parsed.epoch == epoch else Cursor(epoch, 0).to_string()
