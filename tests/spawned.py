"""Spawned test processes that are always stopped: started together, joined by one deadline, killed after.

A process left running after a failed or timed-out test would keep pytest from exiting (multiprocessing
joins its children at interpreter exit), so every test that spawns processes goes through ``run_spawned``.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence
from multiprocessing.process import BaseProcess

SPAWN = multiprocessing.get_context("spawn")
DEADLINE_S = 60.0
"""How long a group of test processes may run in all; a barrier inside one waits at most this long too."""


def run_spawned(processes: Sequence[BaseProcess], deadline_s: float = DEADLINE_S) -> None:
    """Start every process, wait for all of them within ``deadline_s`` and assert each exited 0; whatever
    is still alive when this returns or raises is killed."""
    try:
        for process in processes:
            process.start()
        ends_at = time.monotonic() + deadline_s
        for process in processes:
            process.join(max(ends_at - time.monotonic(), 0.0))
        assert [p.exitcode for p in processes] == [0] * len(processes), "a spawned process failed or hung"
    finally:
        stop_spawned(processes)


def stop_spawned(processes: Sequence[BaseProcess]) -> None:
    """Kill and reap every process of ``processes`` that is still running (never started ones are skipped)."""
    for process in processes:
        if process.pid is not None and process.is_alive():
            process.kill()
            process.join(5)
