"""``/metrics`` and retention: what a run removed is counted per kind from the database, and the counters
derived from rows — finished turns, given-up replies — do not go down when retention deletes those rows."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from gateway.config import StorageSettings
from gateway.http import Metrics
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage import open_storage
from gateway.storage.queue import JobReply
from tests.storage.contract.test_queue import LONG, request


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_counters_of_removed_rows_keep_counting(home: Path) -> None:
    async with open_storage(home, StorageSettings()) as storage:
        for n in range(3):
            await storage.queue.enqueue(request(f"hi {n}", event=f"e{n}", room=f"r{n}"), QUEUE_WHEN_BUSY)
        jobs = sorted(
            await storage.queue.claim("w", lease_s=LONG, limit=10, max_attempts=3), key=lambda j: j.id
        )
        for job in jobs[:2]:
            assert await storage.queue.finish(job.id, "w", state="done", reply=JobReply("ok"))
        assert await storage.queue.finish(jobs[2].id, "w", state="failed", error="boom")
        for item in await storage.outbox.claim(["test"], "d", claim_s=600.0, limit=10):
            await storage.outbox.mark_failed(item.id, "blocked")
        metrics = Metrics(storage.admin)
        metrics.watch_retention(storage.retention)
        before = samples((await metrics.render()).decode())
        assert before[("mnemogate_turns_total", (("outcome", "ok"),))] == 2
        assert before[("mnemogate_delivery_failures_total", ())] == 2
        assert before[("mnemogate_retention_removed_total", (("kind", "turn_jobs_done"),))] == 0
        await asyncio.sleep(0.05)  # not a synchronisation: the rows must become older than an age of 0
        assert await storage.retention.prune_given_up_outbox(older_than_s=0.0, limit=10) == 2
        assert await storage.retention.prune_jobs(older_than_s=0.0, limit=10) == 3
        after = samples((await metrics.render()).decode())
    for key in (
        ("mnemogate_turns_total", (("outcome", "ok"),)),
        ("mnemogate_turns_total", (("outcome", "failed"),)),
        ("mnemogate_delivery_failures_total", ()),
    ):
        assert after[key] == before[key], key
    assert after[("mnemogate_retention_removed_total", (("kind", "turn_jobs_done"),))] == 2
    assert after[("mnemogate_retention_removed_total", (("kind", "outbox_given_up"),))] == 2
