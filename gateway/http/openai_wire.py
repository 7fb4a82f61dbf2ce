"""The OpenAI wire format of ``/v1``: request bodies, completion bodies and stream chunks, and errors.

Invariants: every error a ``/v1`` route answers — a malformed body (400), a missing or wrong token (401),
a refusal (403, or 429 with Retry-After), an unknown model (404), a failed or late turn (502, 504) — has
OpenAI's shape ``{"error": {"message", "type", "param", "code"}}`` and a short message that never echoes
what the client sent; every body and chunk names the model that answered, never just the one asked for.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from gateway.api import ServedModel

_MAX_MESSAGE = 500
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}
_ERROR_CODES = {401: "invalid_api_key", 403: "permission_denied", 429: "rate_limit_exceeded"}
Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Role
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        """The message as text: its text parts, and a marker for each part that is not text."""
        if isinstance(self.content, str):
            return self.content
        parts = self.content or []
        return "\n".join(
            p.text or "" if p.type == "text" else f"[{p.type.removesuffix('_url')}]" for p in parts
        )


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class CompletionRequest(BaseModel):
    """What ``POST /v1/chat/completions`` reads; sampling options and client tools are ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(default="", max_length=200)
    messages: list[ChatMessageIn] = Field(min_length=1)
    user: str | None = Field(default=None, max_length=200)
    stream: bool = False
    stream_options: StreamOptions | None = None

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


def openai_error(
    status: int,
    message: str,
    *,
    kind: str | None = None,
    code: str | None = None,
    param: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """An error response in OpenAI's shape; ``kind`` and ``code`` default by status."""
    body = {
        "message": message[:_MAX_MESSAGE],
        "type": kind or _ERROR_TYPES.get(status, "server_error"),
        "param": param,
        "code": code or _ERROR_CODES.get(status),
    }
    return JSONResponse({"error": body}, status_code=status, headers=dict(headers or {}))


def _invalid_body(exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        return openai_error(400, "the request body is not valid JSON")
    location = [str(part) for part in first.get("loc", ()) if part != "body"]
    param = ".".join(location) or None
    message = str(first.get("msg", "invalid request body"))
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    text = f"{param}: {message}{more}" if param else f"{message}{more}"
    return openai_error(400, text.encode("utf-8", "backslashreplace").decode("utf-8"), param=param)


class OpenAIRoute(APIRoute):
    """A route whose refusals — by a guard, a dependency or body validation — are OpenAI-shaped errors."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def handler(request: Request) -> Response:
            try:
                return await handle(request)
            except RequestValidationError as exc:
                return _invalid_body(exc)
            except HTTPException as exc:
                return openai_error(exc.status_code, str(exc.detail), headers=exc.headers)

        return handler


@dataclass(frozen=True)
class Completion:
    """One completion's identity, shared by its body or every chunk of its stream."""

    id: str
    created: int
    model: str

    @classmethod
    def new(cls, model: ServedModel) -> Completion:
        return cls("chatcmpl-" + secrets.token_hex(12), int(time.time()), model.id)

    def body(self, text: str, usage: Mapping[str, int]) -> dict[str, Any]:
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        return {**self._head("chat.completion"), "choices": [choice], "usage": dict(usage)}

    def chunk(self, delta: Mapping[str, str], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": dict(delta), "finish_reason": finish}
        return sse({**self._head("chat.completion.chunk"), "choices": [choice]})

    def usage_chunk(self, usage: Mapping[str, int]) -> str:
        return sse({**self._head("chat.completion.chunk"), "choices": [], "usage": dict(usage)})

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}


def sse(payload: object) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


def stream_error(message: str, kind: str) -> str:
    """The event that ends a stream that failed after it began (the SDK raises it as an ``APIError``)."""
    return sse({"error": {"message": message[:_MAX_MESSAGE], "type": kind, "param": None, "code": None}})


STREAM_DONE = "data: [DONE]\n\n"


def retry_after(seconds: float | None) -> dict[str, str]:
    """The ``Retry-After`` header for a wait of ``seconds`` (whole seconds, at least 1)."""
    return {"Retry-After": str(max(1, math.ceil(seconds or 1.0)))}


def usage_of(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def model_card(model: ServedModel, created: int) -> dict[str, Any]:
    return {"id": model.id, "object": "model", "created": created, "owned_by": model.owned_by}
