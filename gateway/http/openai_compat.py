"""``POST /v1/chat/completions``: existing OpenAI clients talk to the agent through the normal pipeline.

Who a client is: the conversation (chat id, and so account and person, on platform "api") belongs to
the pair (bearer token, ``user``) — ``<token fingerprint>.<user>``, the fingerprint being a keyed hash of
the presented token (``ClientKey.api_client``), never the token. A request without ``user`` is
stateless: it gets a conversation and person of its own (``<fingerprint>+<random>``), so it shares no
memory or history with any other request. Only the LAST user message is submitted, because the gateway
already keeps the conversation's history.

Every request gets ITS answer: requests of one conversation take turns, and each waits for the reply to
its own message (``WebChatAdapter.ask``), never for a notice or another request's reply. A rate-limited
request is answered 429 with Retry-After and nothing is stored; a turn that failed is a 502. ``stream:
true`` returns the answer as SSE chunks. Usage is the growth of the conversation's stored token counters
across the request.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from gateway.http.access import BearerGuard
from gateway.http.webchat_routes import retry_after
from gateway.identity import ClientKey
from gateway.sessions import KeyScope, SessionKey
from gateway.storage.admin_reads import AdminReads, TokenTotals
from gateway.webchat import (
    ChannelNotStartedError,
    MessageRefusedError,
    PendingReply,
    ReplyTimeoutError,
    WebChatAdapter,
)


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


class CompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = "mnemogate"
    messages: list[ChatMessageIn] = Field(min_length=1)
    user: str | None = Field(default=None, max_length=200)
    stream: bool = False


def _text(message: ChatMessageIn) -> str:
    if isinstance(message.content, str):
        return message.content
    parts = message.content or []
    return "\n".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


def _error(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": status}}, status_code=status, headers=headers
    )


def api_chat_id(key: ClientKey, request: Request, user: str | None) -> str:
    """The conversation of this request: (token fingerprint, user), or a fresh one without ``user``."""
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    client = key.api_client(presented.strip() if scheme.lower() == "bearer" else None)
    return f"{client}.{user}" if user else f"{client}+{secrets.token_hex(8)}"


def openai_router(
    channel: WebChatAdapter,
    guard: BearerGuard,
    timeout: float,
    *,
    client_key: ClientKey | None = None,
    reads: AdminReads | None = None,
) -> APIRouter:
    """The endpoint on ``channel``; usage is read through ``reads`` (zero without it).

    ``client_key`` fingerprints tokens (the home's key; without it, a key for this process only).
    """
    router = APIRouter(dependencies=[Depends(guard)])
    key = client_key or ClientKey.ephemeral()

    async def tokens(chat_id: str) -> TokenTotals:
        if reads is None:
            return TokenTotals()
        prefix = (
            SessionKey(platform=channel.name, scope=KeyScope.DM, chat_id=chat_id)
            .to_string()
            .rsplit(":", 2)[0]
        )
        return await reads.live_token_totals(prefix + ":")

    @router.post("/v1/chat/completions", response_model=None)
    async def completions(body: CompletionRequest, request: Request) -> JSONResponse | StreamingResponse:
        user_messages = [m for m in body.messages if m.role == "user"]
        if not user_messages or not _text(user_messages[-1]).strip():
            return _error(400, "messages must contain a user message with text", "invalid_request_error")
        chat_id = api_chat_id(key, request, body.user)
        completion_id = "chatcmpl-" + secrets.token_hex(12)
        created = int(time.time())
        before = await tokens(chat_id)
        try:
            pending = await channel.ask(chat_id, _text(user_messages[-1]), timeout=timeout)
        except ChannelNotStartedError as exc:
            return _error(503, str(exc), "server_error")
        except MessageRefusedError as exc:
            if exc.reason == "rate_limited":
                return _error(429, str(exc), "rate_limit_exceeded", retry_after(exc.retry_after_s))
            return _error(403, str(exc), "permission_denied")
        except ReplyTimeoutError as exc:
            return _error(504, f"the agent did not reply in time: {exc}", "timeout")
        if body.stream:
            return StreamingResponse(
                _stream(pending, completion_id, created, body.model), media_type="text/event-stream"
            )
        try:
            reply = await pending.answer()
        except ReplyTimeoutError as exc:
            return _error(504, f"the agent did not reply in time: {exc}", "timeout")
        if reply.kind == "error":
            return _error(502, reply.text, "server_error")
        after = await tokens(chat_id)
        prompt = max(0, after.input_tokens - before.input_tokens)
        completion = max(0, after.output_tokens - before.output_tokens)
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": body.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        )

    return router


async def _stream(pending: PendingReply, completion_id: str, created: int, model: str) -> AsyncIterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(payload)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    try:
        reply = await pending.answer()
    except ReplyTimeoutError as exc:
        yield f"data: {json.dumps({'error': {'message': str(exc), 'type': 'timeout'}})}\n\n"
        return
    if reply.kind == "error":
        yield f"data: {json.dumps({'error': {'message': reply.text, 'type': 'server_error'}})}\n\n"
        return
    yield chunk({"content": reply.text})
    yield chunk({}, "stop")
    yield "data: [DONE]\n\n"
