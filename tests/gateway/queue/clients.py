"""Test model clients with timing control: a turn that streams slowly, or waits for the test to release it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self

from agent_core.llm import LLMRequest
from agent_core.llm.events import LLMEvent, StopEvent, TextDelta, UsageEvent

from .harness import pending_user_texts


class PacedClient:
    """Echoes the pending user messages; the first ``slow_calls`` calls stream one delta every ``pace_s``
    for ``deltas`` deltas (safe points for interrupts), or wait for ``gate`` when one is given."""

    name = "paced"

    def __init__(
        self,
        *,
        slow_calls: int = 1,
        deltas: int = 200,
        pace_s: float = 0.02,
        gate: asyncio.Event | None = None,
    ) -> None:
        self.calls: list[list[str]] = []
        self.started = asyncio.Event()
        self._slow_calls = slow_calls
        self._deltas = deltas
        self._pace_s = pace_s
        self._gate = gate

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        texts = pending_user_texts(request)
        self.calls.append(texts)
        slow = len(self.calls) <= self._slow_calls
        self.started.set()
        if slow and self._gate is not None:
            await self._gate.wait()
        elif slow:
            for _ in range(self._deltas):
                await asyncio.sleep(self._pace_s)
                yield TextDelta(".")  # visible text: each delta is a safe point for interrupts
        yield TextDelta("echo: " + " | ".join(texts))
        yield UsageEvent(input_tokens=10, output_tokens=3, cache_read_tokens=7)
        yield StopEvent("end_turn")

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None
