"""A home with data past a retention age of ``AGE_DAYS``: written through the storage port, then aged by
letting the clock pass that age (a bounded wait on the clock, nothing else)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from agent_core.storage import NewMessage, Principal
from gateway.config import StorageSettings
from gateway.storage import open_storage

AGE_DAYS = 1e-5
"""0.864 s: settings ages in days, small enough for a test to wait for."""
AGE_S = AGE_DAYS * 86_400.0
BIG_OUTPUT = "the okapicanary result " + "row of data " * 500


@dataclass(frozen=True, slots=True)
class OldData:
    conversation_id: str
    tool_message_id: int
    events: tuple[str, ...]


def retention_environment(**overrides: str) -> dict[str, str]:
    """Every retention age at ``AGE_DAYS`` (grace too), as environment settings, plus ``overrides``."""
    ages = {
        f"MNEMOGATE_RETENTION__{key}": str(AGE_DAYS)
        for key in (
            "CONVERSATIONS_DAYS", "CONVERSATIONS_GRACE_DAYS", "TOOL_OUTPUTS_DAYS", "LEDGER_DAYS", "JOBS_DAYS",
            "GIVEN_UP_REPLIES_DAYS", "SCHEDULE_RUNS_DAYS",
        )
    }  # fmt: skip
    return {**ages, "MNEMOGATE_RETENTION__TOOL_OUTPUT_MIN_CHARS": "2000", **overrides}


async def write_old_data(home: Path, settings: StorageSettings | None = None) -> OldData:
    """One conversation with a user message and a large tool output, and three ledger rows; returns once
    they are older than ``AGE_S``."""
    async with open_storage(home, settings or StorageSettings()) as storage:
        conversation = await storage.agent.ensure_conversation("web:dm:ana", Principal(person_id="ana"))
        _, tool_id = await storage.agent.append_messages(
            conversation.tip_session_id,
            [
                NewMessage("user", "look up the okapi", author="ana"),
                NewMessage("tool", BIG_OUTPUT, tool_call_id="c1", tool_name="lookup"),
            ],
        )
        events = tuple(f"event-{n}" for n in range(3))
        for event in events:
            assert await storage.ledger.record_event("web", event, kind="command")
        assert await storage.search.wait_indexed(10)
    await asyncio.sleep(AGE_S + 0.05)  # not a synchronisation: the data must become older than the age
    return OldData(conversation.id, tool_id, events)
