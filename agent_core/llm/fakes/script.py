"""What a fake provider replies (:class:`FakeReply`) and what it recorded (:class:`RecordedRequest`).

One ``FakeReply`` answers one HTTP request: a text reply (streamed in ``chunks`` deltas), tool calls,
reasoning, an HTTP error with an optional retry-after, a delay before answering (to force client
timeouts) or an error event in the middle of a stream. Protocol-specific rendering lives in each
fake server; this module is shared vocabulary.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["FakeHTTPResponse", "FakeReply", "FakeToolCall", "RecordedRequest"]


@dataclass(frozen=True)
class FakeToolCall:
    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)
    id: str = ""
    raw_arguments: str | None = None
    """Sent instead of ``arguments`` when set (e.g. deliberately broken JSON)."""
    omit_id: bool = False
    """Stream the call without an id, as llama.cpp and older Ollama builds do (OpenAI fake only)."""

    def arguments_text(self) -> str:
        return self.raw_arguments if self.raw_arguments is not None else json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class FakeReply:
    text: str = "ok"
    chunks: int = 1
    tool_calls: tuple[FakeToolCall, ...] = ()
    reasoning: str = ""
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    retry_after: str | None = None
    """Raw ``retry-after`` header value: delta-seconds ("0.2") or an HTTP date."""
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    stop_reason: str | None = None
    usage: Mapping[str, object] | None = None
    """Overrides the usage the fake would compute (provider field names)."""
    stream_error_type: str = ""
    """If set, the stream sends the text and then this error event instead of finishing."""

    @classmethod
    def say(cls, text: str, *, chunks: int = 1, reasoning: str = "") -> FakeReply:
        return cls(text=text, chunks=chunks, reasoning=reasoning)

    @classmethod
    def call(cls, name: str, arguments: Mapping[str, object], *, id: str = "", text: str = "") -> FakeReply:
        return cls(text=text, tool_calls=(FakeToolCall(name, dict(arguments), id),))

    @classmethod
    def error(
        cls, status: int, *, error_type: str = "", message: str = "", retry_after: float | str | None = None
    ) -> FakeReply:
        header = None if retry_after is None else str(retry_after)
        return cls(text="", status=status, error_type=error_type, error_message=message, retry_after=header)

    @classmethod
    def slow(cls, delay_s: float, text: str = "too late") -> FakeReply:
        return cls(text=text, delay_s=delay_s)

    def text_chunks(self) -> list[str]:
        if not self.text:
            return []
        size = max(-(-len(self.text) // max(self.chunks, 1)), 1)
        return [self.text[i : i + size] for i in range(0, len(self.text), size)]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    raw_body: bytes
    at: float
    """``time.monotonic()`` when the request's body had fully arrived."""

    @property
    def body(self) -> dict[str, object]:
        parsed = json.loads(self.raw_body or b"{}")
        return parsed if isinstance(parsed, dict) else {}


@dataclass(frozen=True)
class FakeHTTPResponse:
    status: int
    headers: tuple[tuple[str, str], ...]
    chunks: tuple[bytes, ...]
    chunk_delay_s: float = 0.0

    @classmethod
    def json(
        cls, status: int, payload: object, headers: tuple[tuple[str, str], ...] = ()
    ) -> FakeHTTPResponse:
        body = json.dumps(payload).encode()
        return cls(status, (("content-type", "application/json"), *headers), (body,))
