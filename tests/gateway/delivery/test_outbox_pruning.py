"""The delivery loop's pruner: ``delivery.outbox_keep_days`` of 0 keeps every delivered row for good, and a
pass deletes a backlog in batches of ``outbox_prune_batch``. (Pruning by age with the rows aged in state.db
is in tests/gateway/storage/sqlite/test_outbox_pruning.py; the outbox's own rules in the contract suite.)"""

from __future__ import annotations

import time
from pathlib import Path

from gateway.contracts import ChatKind, ChatRef
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.outbox import ChunkReceipt, OutboxEntry, OutboxRepository
from tests.adapters.fakes.recording_sink import wait_until

from ..queue.harness import backbone, open_config


async def _delivered(outbox: OutboxRepository, count: int) -> None:
    """``count`` rows delivered just now, each in its own chat; "elsewhere" has no adapter in the backbone,
    so its loop never touches them."""
    for n in range(count):
        chat = chat_to_text(ChatRef("elsewhere", f"c{n}", ChatKind.DM))
        await outbox.add(OutboxEntry("cv", "elsewhere", chat, f"row {n}", f"k{n}"))
    for item in await outbox.claim(["elsewhere"], "test", claim_s=600.0, limit=count):
        await outbox.mark_sent(item.id, ChunkReceipt(0, f"m{item.id}"))
    marked = time.time()
    await wait_until(lambda: time.time() > marked + 0.001, what="the clock to move past the deliveries")


async def test_a_keep_time_of_zero_keeps_every_row(home: Path) -> None:
    async with backbone(home, config=open_config(delivery={"outbox_keep_days": 0}), workers=False) as b:
        await _delivered(b.delivery.outbox, 2)
        assert await b.delivery.pruner.prune() == 0
        rows = await b.gateway.outbox.for_conversation("cv")
    assert [row.state for row in rows] == ["sent", "sent"]


async def test_a_pass_deletes_a_backlog_batch_by_batch(home: Path) -> None:
    # A keep time under a microsecond: every row delivered before the pass is old enough. (The loop's own
    # first pass ran at start, when nothing was delivered; whichever pass deletes a row counts it.)
    pruning = {"outbox_keep_days": 1e-11, "outbox_prune_batch": 2, "outbox_prune_every_s": 3600}
    async with backbone(home, config=open_config(delivery=pruning), workers=False) as b:
        await _delivered(b.delivery.outbox, 5)
        await b.delivery.pruner.prune()
        assert await b.gateway.outbox.for_conversation("cv") == []  # one pass, three batches
        assert b.delivery.pruner.pruned == 5
