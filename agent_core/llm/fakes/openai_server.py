"""A fake OpenAI-compatible Chat Completions API on loopback: ``POST /v1/chat/completions``.

Streams ``data:`` chunks (no ``event:`` lines) ending in ``data: [DONE]``, tool-call arguments in
fragments by index, a usage-only chunk when ``stream_options.include_usage`` is set, and
``prompt_tokens_details.cached_tokens`` from an automatic prefix cache over whole messages (the way
OpenAI caches without markers).
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from agent_core.llm.fakes.prefix_cache import PrefixCache, estimate_tokens
from agent_core.llm.fakes.provider import FakeProviderServer, ReplySource
from agent_core.llm.fakes.script import FakeHTTPResponse, FakeReply, RecordedRequest

__all__ = ["FakeOpenAIServer"]

_DEFAULT_ERRORS = MappingProxyType(
    {
        400: ("invalid_request_error", "invalid_request_error"),
        401: ("invalid_request_error", "invalid_api_key"),
        403: ("invalid_request_error", "permission_denied"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
        500: ("server_error", "server_error"),
    }
)
_FINISH = MappingProxyType({"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"})


class FakeOpenAIServer(FakeProviderServer):
    paths = ("/v1/chat/completions", "/chat/completions")
    provider = "openai"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        default: ReplySource | None = None,
        cache: PrefixCache | None = None,
    ) -> None:
        super().__init__(api_key=api_key, default=default)
        self.cache = cache or PrefixCache(lookback=1)

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's ``base_url`` (it includes ``/v1``, like Ollama's or vLLM's)."""
        return f"{self.origin}/v1"

    def error_response(self, status: int, error_type: str, message: str) -> FakeHTTPResponse:
        kind, code = _DEFAULT_ERRORS.get(status, ("server_error", "server_error"))
        if error_type:
            kind = code = error_type
        payload = {"error": {"message": message or code, "type": kind, "param": None, "code": code}}
        return FakeHTTPResponse.json(status, payload, (("x-request-id", "req_fake"),))

    def render(self, request: RecordedRequest, reply: FakeReply, serial: int) -> FakeHTTPResponse:
        body = request.body
        usage = self._usage(body, reply)
        finish = _FINISH.get(reply.stop_reason or "", reply.stop_reason) or (
            "tool_calls" if reply.tool_calls else "stop"
        )
        base = {"id": f"chatcmpl-fake-{serial}", "created": 1_700_000_000, "model": body.get("model")}
        calls = [
            {
                "id": None if call.omit_id else call.id or f"call_fake_{serial}_{n}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text()},
            }
            for n, call in enumerate(reply.tool_calls)
        ]
        if not body.get("stream"):
            message = {
                "role": "assistant",
                "content": reply.text or None,
                **({"tool_calls": calls} if calls else {}),
            }
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return FakeHTTPResponse.json(
                200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            )
        options = body.get("stream_options")
        with_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        chunks = _stream_chunks(reply, calls, finish, usage if with_usage else None)
        data = [f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', **c})}\n\n" for c in chunks]
        frames = tuple(frame.encode() for frame in [*data, "data: [DONE]\n\n"])
        return FakeHTTPResponse(200, (("content-type", "text/event-stream"),), frames, reply.chunk_delay_s)

    def _usage(self, body: dict[str, Any], reply: FakeReply) -> dict[str, Any]:
        messages = body.get("messages") or []
        items: list[object] = [["tools", body.get("tools") or []], *messages]
        cached = self.cache.observe(str(body.get("model")), items, range(len(items)))
        prompt = cached.input_tokens + cached.cache_read_tokens + cached.cache_write_tokens
        output_chars = (
            len(reply.text) + len(reply.reasoning) + sum(len(c.arguments_text()) for c in reply.tool_calls)
        )
        completion = max(estimate_tokens(output_chars), 1)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached.cache_read_tokens},
        }
        usage.update(reply.usage or {})
        return usage


def _stream_chunks(
    reply: FakeReply, calls: list[dict[str, Any]], finish: str, usage: dict[str, Any] | None
) -> list[dict[str, Any]]:
    def choice(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    chunks = [choice({"role": "assistant", "content": ""})]
    if reply.reasoning:
        chunks.append(choice({"reasoning_content": reply.reasoning}))
    chunks.extend(choice({"content": text}) for text in reply.text_chunks())
    if reply.stream_error_type:
        error = {"message": reply.error_message or reply.stream_error_type, "type": reply.stream_error_type}
        return [*chunks, {"error": {**error, "code": reply.stream_error_type}}]
    for index, call in enumerate(calls):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"]},
        }
        head["function"]["arguments"] = ""
        chunks.append(choice({"tool_calls": [head]}))
        text = call["function"]["arguments"]
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            chunks.append(choice({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
    chunks.append(choice({}, finish))
    if usage is not None:
        chunks.append({"choices": [], "usage": usage})
    return chunks
