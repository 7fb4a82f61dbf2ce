"""An import killed with SIGKILL leaves whole conversations only, and importing again completes it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bench.corpus_chat import ChatTranscripts
from gateway.storage.imports import ImportReport
from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.importer import SqliteTranscriptImport

_CHILD = """
import asyncio, sys
from pathlib import Path
from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.importer import SqliteTranscriptImport

async def main() -> None:
    async with open_state_store(Path(sys.argv[1])) as store:
        await SqliteTranscriptImport(store, batch_messages=300).import_path(Path(sys.argv[2]))

asyncio.run(main())
"""


def _committed_conversations(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM conversations").fetchone()[0])
    except sqlite3.OperationalError:
        return 0  # not created yet


def _import_and_kill(home: Path, source: Path) -> int:
    """Start an import in a child process and SIGKILL it once its first batch has committed."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(home), str(source)])
    try:
        deadline = time.monotonic() + 30
        while _committed_conversations(home / "state.db") == 0 and time.monotonic() < deadline:
            assert child.poll() is None, "the import finished or failed before it could be killed"
            time.sleep(0.005)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(10)
    return child.returncode


def test_a_killed_import_keeps_whole_conversations_and_resumes(tmp_path: Path) -> None:
    lines = list(ChatTranscripts(seed=3, persons=20).jsonl(40_000))
    expected = {json.loads(text)["id"]: len(json.loads(text)["messages"]) for text in lines}
    source = tmp_path / "big.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    assert _import_and_kill(home, source) == -signal.SIGKILL
    counts, report, total = asyncio.run(_inspect_and_reimport(home, source))
    assert 0 < len(counts) < len(expected)
    assert all(counts[cid] == expected[cid] for cid in counts)
    assert report.conversations == len(expected) - len(counts) and not report.errors
    assert total == sum(expected.values())


async def _inspect_and_reimport(home: Path, source: Path) -> tuple[dict[str, int], ImportReport, int]:
    async with open_state_store(home) as store:
        rows = await store.run_read(
            lambda c: c.execute(
                "SELECT c.id, count(m.id) FROM conversations AS c "
                "LEFT JOIN messages AS m ON m.conversation_id = c.id GROUP BY c.id"
            ).fetchall()
        )
        report = await SqliteTranscriptImport(store).import_path(source)
        total = await store.run_read(lambda c: c.execute("SELECT count(*) FROM messages").fetchone()[0])
    return {str(cid): int(n) for cid, n in rows}, report, int(total)
