"""``POST /v1/chat/completions``: existing OpenAI clients talk to the agent through the normal pipeline.

The request's ``user`` names the conversation (chat id on platform "api"); only the LAST user message is
submitted, because the gateway already keeps the conversation's history. The reply is whatever the
delivery loop hands the "api" channel for that chat; ``stream: true`` returns it as SSE chunks.
Usage is the growth of the conversation's stored token counters across the request.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from agent_core.state import StateStore
from agent_core.state.admin_reads import conversation_token_totals, live_conversation_with_prefix
from gateway.http.access import BearerGuard
from gateway.sessions import KeyScope, SessionKey
from gateway.webchat import ChannelNotStartedError, ReplyTimeoutError, WebChatAdapter

DEFAULT_USER = "default"


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


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def openai_router(
    channel: WebChatAdapter, state: StateStore | None, guard: BearerGuard, timeout: float
) -> APIRouter:
    router = APIRouter(dependencies=[Depends(guard)])

    async def tokens(chat_id: str) -> tuple[int, int]:
        if state is None:
            return 0, 0
        prefix = (
            SessionKey(platform=channel.name, scope=KeyScope.DM, chat_id=chat_id)
            .to_string()
            .rsplit(":", 2)[0]
        )
        conversation_id = await state.run_read(lambda c: live_conversation_with_prefix(c, prefix + ":"))
        if conversation_id is None:
            return 0, 0
        return await state.run_read(lambda c: conversation_token_totals(c, conversation_id))

    @router.post("/v1/chat/completions", response_model=None)
    async def completions(body: CompletionRequest) -> JSONResponse | StreamingResponse:
        user_messages = [m for m in body.messages if m.role == "user"]
        if not user_messages or not _text(user_messages[-1]).strip():
            return _error(400, "messages must contain a user message with text", "invalid_request_error")
        chat_id = body.user or DEFAULT_USER
        text = _text(user_messages[-1])
        completion_id = "chatcmpl-" + secrets.token_hex(12)
        created = int(time.time())
        if body.stream:
            return StreamingResponse(
                _stream(channel, chat_id, text, timeout, completion_id, created, body.model),
                media_type="text/event-stream",
            )
        before = await tokens(chat_id)
        try:
            _, replies = await channel.ask(chat_id, text, timeout=timeout)
        except ChannelNotStartedError as exc:
            return _error(503, str(exc), "server_error")
        except ReplyTimeoutError as exc:
            return _error(504, f"the agent did not reply in time: {exc}", "timeout")
        after = await tokens(chat_id)
        prompt, completion = max(0, after[0] - before[0]), max(0, after[1] - before[1])
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": body.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "\n\n".join(r.text for r in replies)},
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


async def _stream(
    channel: WebChatAdapter,
    chat_id: str,
    text: str,
    timeout: float,  # noqa: ASYNC109 - handed to the channel, which enforces it
    completion_id: str,
    created: int,
    model: str,
) -> AsyncIterator[str]:
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
        _, replies = await channel.ask(chat_id, text, timeout=timeout)
    except (ChannelNotStartedError, ReplyTimeoutError) as exc:
        yield f"data: {json.dumps({'error': {'message': str(exc), 'type': 'server_error'}})}\n\n"
        return
    for index, reply in enumerate(replies):
        yield chunk({"content": ("\n\n" if index else "") + reply.text})
    yield chunk({}, "stop")
    yield "data: [DONE]\n\n"
