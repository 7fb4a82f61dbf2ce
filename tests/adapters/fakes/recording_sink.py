"""The gateway's side of the adapter contract in tests: a sink that records (or refuses) what it is handed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gateway.contracts import InboundMessage


@dataclass
class RecordingSink:
    """The gateway's side of the contract: stores what it is handed; can be told to refuse."""

    received: list[InboundMessage] = field(default_factory=list)
    offered: list[InboundMessage] = field(default_factory=list)
    refuse: int = 0
    hold: asyncio.Event | None = None

    async def __call__(self, message: InboundMessage) -> None:
        self.offered.append(message)
        if self.hold is not None:
            await self.hold.wait()
        if self.refuse > 0:
            self.refuse -= 1
            raise RuntimeError("state.db is locked")
        self.received.append(message)

    async def wait_for(self, count: int, within_s: float = 10.0) -> list[InboundMessage]:
        await wait_until(lambda: len(self.received) >= count, within_s, f"{count} inbound messages")
        return self.received


async def wait_until(condition: Callable[[], bool], within_s: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
