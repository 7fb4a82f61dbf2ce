"""A memory-writing OS process for the multi-process tests: adds numbered entries, acknowledging each.

Run as ``python -m tests.multiprocess.memory_worker HOME PERSON PREFIX COUNT ACK_FILE``. A line
``PREFIX-i`` is appended to ACK_FILE only after ``add`` returned success, i.e. after the entry is
durable; a test that kill -9s this process may therefore rely on every acknowledged entry surviving.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agent_core.memory import MemorySettings, SyncMemoryStore

# Large enough for every entry the tests write, so only concurrency (never the limit) can lose one.
WORKER_SETTINGS = MemorySettings(memory_char_limit=1_000_000)


def main(argv: list[str]) -> int:
    home, person, prefix, count, ack_file = argv
    store = SyncMemoryStore(Path(home), WORKER_SETTINGS)
    ack = os.open(ack_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for index in range(int(count)):
            entry = f"{prefix}-{index}"
            result = store.add(person_id=person, target="memory", content=entry, is_admin=False).result
            if not result.success:
                print(f"add {entry} failed: {result.error}", file=sys.stderr)
                return 1
            os.write(ack, f"{entry}\n".encode())
    finally:
        os.close(ack)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
