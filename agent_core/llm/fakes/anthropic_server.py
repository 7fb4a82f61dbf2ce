"""A fake Anthropic Messages API on loopback: ``POST /v1/messages``, JSON or SSE, with a prefix cache.

Wire details follow anthropic SDK 2.x: the key arrives as ``Authorization: Bearer`` (``x-api-key``
is accepted too), every SSE event carries an ``event:`` line, usage reports
``cache_read_input_tokens`` / ``cache_creation_input_tokens`` from :class:`PrefixCache`.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from agent_core.llm.fakes.prefix_cache import PrefixCache, estimate_tokens
from agent_core.llm.fakes.provider import FakeProviderServer, ReplySource
from agent_core.llm.fakes.script import FakeHTTPResponse, FakeReply, RecordedRequest

__all__ = ["FakeAnthropicServer", "anthropic_cache_items"]

_DEFAULT_ERROR_TYPES = MappingProxyType(
    {
        400: "invalid_request_error",
        401: "authentication_error",
        402: "billing_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }
)


def anthropic_cache_items(body: dict[str, Any]) -> tuple[list[object], list[int]]:
    """The request's cacheable items in prefix order (tools, system, messages) and its breakpoints."""
    items: list[object] = []
    marks: list[int] = []

    def add(item: dict[str, Any], prefix: list[object]) -> None:
        if "cache_control" in item:
            marks.append(len(items))
        items.append([*prefix, {k: v for k, v in item.items() if k != "cache_control"}])

    for tool in body.get("tools") or []:
        add(tool, ["tool"])
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        add(block, ["system"])
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            add(block, ["message", index, message.get("role")])
    if body.get("cache_control") and items:
        marks.append(len(items) - 1)  # automatic caching: the last cacheable block
    return items, marks


class FakeAnthropicServer(FakeProviderServer):
    paths = ("/v1/messages",)
    provider = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        default: ReplySource | None = None,
        cache: PrefixCache | None = None,
    ) -> None:
        super().__init__(api_key=api_key, default=default)
        self.cache = cache or PrefixCache()

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's ``base_url`` (it appends ``/v1/messages``)."""
        return self.origin

    def presented_key(self, request: RecordedRequest) -> str | None:
        return request.headers.get("x-api-key") or super().presented_key(request)

    def error_response(self, status: int, error_type: str, message: str) -> FakeHTTPResponse:
        kind = error_type or _DEFAULT_ERROR_TYPES.get(status, "api_error")
        payload = {"type": "error", "error": {"type": kind, "message": message or kind}}
        return FakeHTTPResponse.json(status, payload, (("request-id", "req_fake"),))

    def render(self, request: RecordedRequest, reply: FakeReply, serial: int) -> FakeHTTPResponse:
        body = request.body
        items, marks = anthropic_cache_items(body)
        cached = self.cache.observe(str(body.get("model")), items, marks)
        usage = {
            "input_tokens": cached.input_tokens,
            "cache_read_input_tokens": cached.cache_read_tokens,
            "cache_creation_input_tokens": cached.cache_write_tokens,
            "output_tokens": _output_tokens(reply),
            **(reply.usage or {}),
        }
        blocks = _content_blocks(reply, serial)
        stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
        message = {
            "id": f"msg_fake_{serial}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return FakeHTTPResponse.json(200, message)
        return FakeHTTPResponse(
            200,
            (("content-type", "text/event-stream"), ("cache-control", "no-cache")),
            tuple(_sse(name, data) for name, data in _stream_events(reply, message)),
            reply.chunk_delay_s,
        )


def _output_tokens(reply: FakeReply) -> int:
    chars = len(reply.text) + len(reply.reasoning) + sum(len(c.arguments_text()) for c in reply.tool_calls)
    return max(estimate_tokens(chars), 1)


def _content_blocks(reply: FakeReply, serial: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": "sig_fake"})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for n, call in enumerate(reply.tool_calls):
        arguments = json.loads(call.arguments_text()) if call.raw_arguments is None else {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id or f"toolu_fake_{serial}_{n}",
                "name": call.name,
                "input": arguments,
            }
        )
    return blocks


def _stream_events(reply: FakeReply, message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    events.append(("ping", {"type": "ping"}))
    calls = iter(reply.tool_calls)
    for index, block in enumerate(message["content"]):
        call_text = next(calls).arguments_text() if block["type"] == "tool_use" else ""
        events.extend(_block_events(index, block, reply, call_text))
        if block["type"] == "text" and reply.stream_error_type:
            error = {
                "type": reply.stream_error_type,
                "message": reply.error_message or reply.stream_error_type,
            }
            return [*events, ("error", {"type": "error", "error": error})]
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_events(
    index: int, block: dict[str, Any], reply: FakeReply, call_text: str
) -> list[tuple[str, dict[str, Any]]]:
    kind = block["type"]
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": chunk} for chunk in reply.text_chunks()]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": block["thinking"]},
            {"type": "signature_delta", "signature": block["signature"]},
        ]
    else:
        start = {**block, "input": {}}
        half = len(call_text) // 2
        deltas = [
            {"type": "input_json_delta", "partial_json": p} for p in (call_text[:half], call_text[half:])
        ]
    events = [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
    ]
    events.extend(
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        for delta in deltas
    )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
