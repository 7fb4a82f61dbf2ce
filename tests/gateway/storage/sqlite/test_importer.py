"""The SQLite transcript import: each batch of conversations is one write transaction, and line numbers
stay right across batches (the port's behaviour is in tests/storage/contract/test_import.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.importer import SqliteTranscriptImport
from tests.storage.contract.test_import import line


async def test_each_batch_of_conversations_is_one_write_transaction(tmp_path: Path) -> None:
    async with open_state_store(tmp_path) as store:
        before = store.stats().write_commits
        report = await SqliteTranscriptImport(store, batch_messages=4).import_lines(
            [line(f"c{n}") for n in range(6)]  # two messages each: two conversations per batch
        )
        commits = store.stats().write_commits - before
    assert (report.conversations, report.messages) == (6, 12)
    assert commits == 3


async def test_bad_lines_are_numbered_across_batches_of_one(tmp_path: Path) -> None:
    lines = [line("one"), "{", "", json.dumps({"id": "x"}), line("four"), "[]"]
    async with open_state_store(tmp_path) as store:
        report = await SqliteTranscriptImport(store, batch_messages=1).import_lines(lines)
        present = [await store.get_conversation(i) for i in ("one", "four")]
    assert [e.line for e in report.errors] == [2, 4, 6]
    assert report.conversations == 2 and all(c is not None for c in present)


async def test_a_batch_holds_at_least_one_message(tmp_path: Path) -> None:
    async with open_state_store(tmp_path) as store:
        with pytest.raises(ValueError, match="batch_messages"):
            SqliteTranscriptImport(store, batch_messages=0)
