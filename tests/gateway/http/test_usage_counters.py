"""The cost counters of /metrics sum the usage log once per settled stretch: the totals are the same before
and after the calls settle, and reading again never counts a settled call twice (the range reads it takes are
contract-tested on both backends)."""

from __future__ import annotations

import time
from pathlib import Path

from agent_core.storage import ModelCall, Principal
from gateway.config import StorageSettings
from gateway.http.usage_counters import UsageCounters
from gateway.storage import Storage, open_storage
from gateway.storage.budgets import SETTLE_S
from gateway.storage.usage_reads import UsageLine

ADA = Principal(person_id="ada", platform="web", user_id="1", chat_id="1", chat_type="dm")


async def test_totals_hold_as_calls_settle_and_are_never_counted_twice(home: Path) -> None:
    async with open_storage(home, StorageSettings()) as storage:
        await _settle_and_read(storage)


async def _settle_and_read(storage: Storage) -> None:
    tip = (await storage.agent.ensure_conversation("k-ada", ADA)).tip_session_id
    await storage.agent.add_usage(tip, ModelCall(10, 1, cost_usd=0.5, model="gpt-4o"))
    await storage.agent.add_usage(tip, ModelCall(20, 2, model="my-llama"))
    now = [time.time()]
    counters = UsageCounters(storage.usage, clock=lambda: now[0])
    expected = [
        ("web", "gpt-4o", UsageLine(None, 1, 0, 10, 1, 0, 0, 0.5)),
        ("web", "my-llama", UsageLine(None, 1, 1, 20, 2, 0, 0, 0.0)),
    ]
    unsettled = await counters.read()  # both calls are after the watermark: read as the tail
    now[0] += 4 * SETTLE_S  # both calls now lie before it: summed into the settled totals
    settled = await counters.read()
    again = await counters.read()
    for totals in (unsettled, settled, again):
        assert [(c.platform, c.model, c.line) for c in totals] == expected
