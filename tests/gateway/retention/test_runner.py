"""The retention runner over a real store: a run removes at most ``batch`` x ``max_batches`` rows of a kind
(the rest waits for the next run), reports per kind what it removed, leaves the interval to the next run,
and a dry run changes nothing."""

from __future__ import annotations

from pathlib import Path

from gateway.config import StorageSettings
from gateway.retention import RetentionRunner, RetentionSettings
from gateway.retention.deployment import forgetter
from gateway.storage import open_storage

from .old_data import AGE_DAYS, write_old_data

SETTINGS = RetentionSettings(
    conversations_days=0, tool_outputs_days=0, ledger_days=AGE_DAYS, batch=2, max_batches=1, every_s=3600
)


async def test_a_run_is_bounded_reported_and_not_repeated_within_its_interval(home: Path) -> None:
    await write_old_data(home)  # three ledger rows past the age
    async with open_storage(home, StorageSettings()) as storage:
        runner = RetentionRunner(storage.retention, SETTINGS, forget=forgetter(storage), holder="a")
        preview = await runner.preview()
        assert preview.dry_run and preview.removed["ledger"] == 3
        assert (await runner.preview()).removed == preview.removed  # counting changed nothing
        first = await runner.run()
        assert first.removed["ledger"] == 2 and set(first.removed) == {
            "ledger", "turn_jobs_done", "turn_jobs_failed", "outbox_given_up", "schedule_runs"
        }  # fmt: skip
        assert "inbound ledger rows 2" in first.summary()
        assert (await runner.run()).skipped == "ran recently"
        other = RetentionRunner(storage.retention, SETTINGS, forget=None, holder="b")
        assert (await other.run(every_s=0.0)).removed["ledger"] == 1  # the rest, by the next run
        assert (await runner.preview()).removed["ledger"] == 0
