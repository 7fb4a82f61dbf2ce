"""The inbound ledger's count on every backend (``AdminReads.inbound_count``): each accepted platform event
counts once, whether it became a turn or was recorded alone, per platform or over all of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage, Principal
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage.queue import TurnRequest

if TYPE_CHECKING:
    from gateway.storage import Storage


def turn(platform: str, event: str) -> TurnRequest:
    return TurnRequest(
        actor=Actor(person_id="p-ada", platform=platform),
        event_id=event,
        session_key=f"{platform}:dm-ada",
        principal=Principal(person_id="p-ada", platform=platform),
        chat_ref="chat",
        reply_to=None,
        message=NewMessage(role="user", content="hello"),
    )


async def test_an_empty_ledger_counts_nothing(storage: Storage) -> None:
    assert await storage.admin.inbound_count() == 0
    assert await storage.admin.inbound_count(platform="api") == 0


async def test_turns_and_lone_events_count_once_each_per_platform(storage: Storage) -> None:
    queue, admin = storage.queue, storage.admin
    assert not (await queue.enqueue(turn("api", "e1"), QUEUE_WHEN_BUSY)).duplicate
    assert not (await queue.enqueue(turn("api", "e2"), QUEUE_WHEN_BUSY)).duplicate
    assert await queue.record_event("api", "e3", kind="command")
    assert await queue.record_event("web", "e1", kind="denied")
    # Duplicates are refused by the ledger and so never counted.
    assert (await queue.enqueue(turn("api", "e1"), QUEUE_WHEN_BUSY)).duplicate
    assert not await queue.record_event("api", "e3", kind="command")

    assert await admin.inbound_count(platform="api") == 3
    assert await admin.inbound_count(platform="web") == 1
    assert await admin.inbound_count(platform="telegram") == 0
    assert await admin.inbound_count() == 4
