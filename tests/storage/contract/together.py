"""Processes released together on one backend: the contract suite's races, spawned, joined and never leaked.

Each target is called as ``target(*args, barrier, out)``: it opens the backend from its spec, waits on the
barrier so every process starts its race at once, and puts exactly one result on ``out``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tests.spawned import DEADLINE_S, SPAWN, stop_spawned


def run_together(target: Callable[..., None], per_process: Sequence[tuple[Any, ...]]) -> list[Any]:
    """One spawned process per ``args`` tuple; their results in arrival order, once every one exited 0."""
    barrier = SPAWN.Barrier(len(per_process))
    out = SPAWN.Queue()
    processes = [SPAWN.Process(target=target, args=(*args, barrier, out)) for args in per_process]
    for process in processes:
        process.start()
    try:
        results = [out.get(timeout=DEADLINE_S) for _ in processes]
        for process in processes:
            process.join(timeout=DEADLINE_S)
            assert process.exitcode == 0, f"{process.name} exited with {process.exitcode}"
        return results
    finally:
        stop_spawned(processes)
