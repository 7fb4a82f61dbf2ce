"""The real gateway backbone with streaming on: pipeline, queue, the serve process's streaming worker pool
and delivery over one editing test adapter; only the model (gated, delta by delta) is scripted."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.llm import LLMRequest
from agent_core.llm.events import LLMEvent, TextDelta
from agent_core.llm.scripted import ScriptedClient, StepSource
from gateway.config import Home, Settings
from gateway.contracts import Capabilities, ChatRef, SendError
from gateway.delivery import DeliveryLoop, StreamRegistry
from gateway.inbound.session_rules import session_key_for
from gateway.runtime import Gateway, build_gateway, open_runtime, streaming_agent, worker_pool

from ..delivery.recording_adapter import RecordingAdapter, dm


class GatedClient(ScriptedClient):
    """A scripted model that waits for ``release()`` before each text delta after the first."""

    def __init__(self, steps: Sequence[StepSource]) -> None:
        super().__init__(steps)
        self.gate: asyncio.Queue[None] = asyncio.Queue()

    def release(self, count: int = 1) -> None:
        for _ in range(count):
            self.gate.put_nowait(None)

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        first = True
        async for event in super().stream(request):
            if isinstance(event, TextDelta) and not first:
                await self.gate.get()
            first = first and not isinstance(event, TextDelta)
            yield event


class EditingAdapter(RecordingAdapter):
    """A RecordingAdapter that can edit; ``edit_failures`` are raised by the next edits."""

    def __init__(
        self, *, split: str | None = None, can_edit: bool = True, marks_final_edit: bool = False
    ) -> None:
        super().__init__(split=split)
        self.capabilities = Capabilities(
            max_text_length=4096, can_edit=can_edit, marks_final_edit=marks_final_edit
        )
        self.edits: list[tuple[str, str]] = []
        self.edit_failures: list[Exception] = []

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        if self.edit_failures:
            raise self.edit_failures.pop(0)
        self.edits.append((platform_message_id, text))


def never_editable() -> SendError:
    return SendError("message can't be edited", retryable=False, kind="bad_request")


@dataclass
class StreamingBackbone:
    gateway: Gateway
    adapter: EditingAdapter
    client: GatedClient
    streams: StreamRegistry
    conversation: Callable[[], Any]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:  # noqa: ASYNC109
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"condition not met within {timeout} s; sent={self.adapter.texts()} "
                    f"edits={self.adapter.edits}"
                )
            await asyncio.sleep(0.005)

    async def rows_when(self, predicate: Callable[[Any], bool], timeout: float = 10.0) -> Any:  # noqa: ASYNC109
        """The outbox rows (state, text), once ``predicate`` holds for them."""
        deadline = time.monotonic() + timeout
        while not predicate(rows := await self.conversation()):
            if time.monotonic() > deadline:
                raise AssertionError(f"outbox rows stayed {rows}")
            await asyncio.sleep(0.005)
        return rows


def streaming_config(*, streaming: bool = True, rate: dict[str, float] | None = None) -> dict[str, Any]:
    return {
        "access": {"test": {"mode": "open"}},
        "rate_limit": {"enabled": False},
        "delivery": {"platform_rates": {"test": rate or {"per_s": 1000.0, "burst": 1000}}},
        "adapters": {"test": {"enabled": True, "streaming": streaming, "streaming_interval_s": 0.01}},
    }


@contextlib.asynccontextmanager
async def streaming_backbone(
    home: Path,
    client: GatedClient,
    adapter: EditingAdapter,
    *,
    streaming: bool = True,
    rate: dict[str, float] | None = None,
) -> AsyncIterator[StreamingBackbone]:
    settings = Settings(**streaming_config(streaming=streaming, rate=rate))
    async with open_runtime(Home(home), settings, client=client) as runtime:
        gateway = build_gateway(runtime)
        await adapter.start(gateway.pipeline.handle)
        streams = StreamRegistry()
        adapters = {adapter.name: adapter}
        delivery = DeliveryLoop(
            outbox=gateway.outbox.repository,
            adapters=adapters,
            signals=runtime.signals,
            settings=settings.delivery,
            streams=streams,
        )
        async with delivery:
            agent = streaming_agent(runtime, adapters, delivery, streams)
            async with worker_pool(runtime, agent):

                async def outbox() -> Any:
                    """(state, text) of each outbox row of ada's DM, the one chat these tests talk in."""
                    key = session_key_for(dm("", event="-"), settings.sessions).to_string()
                    live = await runtime.storage.agent.live_conversation(key)
                    rows = [] if live is None else await gateway.outbox.for_conversation(live.id)
                    return [(row.state, row.text) for row in rows]

                yield StreamingBackbone(gateway, adapter, client, streams, outbox)
