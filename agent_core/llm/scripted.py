"""A scripted ``LLMClient`` for tests and benches: each call plays the next pre-set step.

A step is a :class:`ScriptStep` (events to yield, optionally an ``LLMError`` to raise after them) or a
function of the request returning one. Every request is recorded in ``requests``. Each call's stream
ends with a ``UsageEvent`` and a ``StopEvent`` even if the step omits them, like a real client.
Running out of steps raises :class:`ScriptExhaustedError` unless a ``default`` step is given.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from agent_core.llm.client import LLMRequest
from agent_core.llm.errors import LLMError, ScriptExhaustedError
from agent_core.llm.events import LLMEvent, StopEvent, TextDelta, ToolCallEvent, UsageEvent
from agent_core.llm.messages import ToolCall

__all__ = ["ScriptStep", "ScriptedClient", "StepSource"]


@dataclass(frozen=True)
class ScriptStep:
    events: tuple[LLMEvent, ...] = ()
    error: LLMError | None = None

    @classmethod
    def reply(cls, text: str, *, chunks: int = 1, usage: UsageEvent | None = None) -> ScriptStep:
        """A text reply streamed as ``chunks`` deltas of (nearly) equal size."""
        size = max(-(-len(text) // max(chunks, 1)), 1)
        deltas = tuple(TextDelta(text[i : i + size]) for i in range(0, len(text), size))
        return cls(deltas + ((usage,) if usage else ()))

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        id: str | None = None,
        text: str = "",
    ) -> ScriptStep:
        call = ToolCall(id or f"call_{name}", name, dict(arguments or {}))
        return cls.tool_calls(call, text=text)

    @classmethod
    def tool_calls(cls, *calls: ToolCall, text: str = "") -> ScriptStep:
        lead: tuple[LLMEvent, ...] = (TextDelta(text),) if text else ()
        return cls(lead + tuple(ToolCallEvent(call) for call in calls))

    @classmethod
    def fail(cls, error: LLMError, *, after_text: str = "") -> ScriptStep:
        """Raise ``error`` (after streaming ``after_text`` if given), as a provider failure would."""
        return cls((TextDelta(after_text),) if after_text else (), error)


StepSource = ScriptStep | Callable[[LLMRequest], ScriptStep]


class ScriptedClient:
    def __init__(
        self, steps: Iterable[StepSource] = (), *, default: StepSource | None = None, name: str = "scripted"
    ) -> None:
        self.name = name
        self.requests: list[LLMRequest] = []
        self._steps: deque[StepSource] = deque(steps)
        self._default = default

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def add(self, *steps: StepSource) -> None:
        self._steps.extend(steps)

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        self.requests.append(request)
        step = self._next_step(request)
        for event in step.events:
            if not isinstance(event, UsageEvent | StopEvent):
                yield event
        if step.error is not None:
            raise step.error
        usage = next((e for e in step.events if isinstance(e, UsageEvent)), UsageEvent())
        yield usage
        has_calls = any(isinstance(e, ToolCallEvent) for e in step.events)
        stop = next((e for e in step.events if isinstance(e, StopEvent)), None)
        yield stop or StopEvent("tool_use" if has_calls else "end_turn")

    def _next_step(self, request: LLMRequest) -> ScriptStep:
        if self._steps:
            source = self._steps.popleft()
        elif self._default is not None:
            source = self._default
        else:
            raise ScriptExhaustedError(f"{self.name}: no scripted step left for call {len(self.requests)}")
        return source if isinstance(source, ScriptStep) else source(request)
