"""Memory write benchmark: N OS processes each add M unique entries to one person's MEMORY.md.

Reports per-add latency percentiles (lock wait + re-read + fsync'd atomic replace) and verifies
afterwards that every acknowledged add is on disk (``lost`` must be 0).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import queue
import tempfile
import time
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from agent_core.memory import MemorySettings, SyncMemoryStore

PERSON = "bench"
_RESULT_TIMEOUT_S = 600.0


class BenchWorkerError(RuntimeError):
    """A benchmark worker process died or never reported."""


def _entry(worker: int, op: int) -> str:
    return f"bench fact w{worker} n{op}"


def _settings(processes: int, ops: int) -> MemorySettings:
    longest = len(_entry(processes, ops)) + 3
    return MemorySettings(memory_char_limit=processes * ops * longest + 1_000)


def _worker(home: str, worker: int, ops: int, processes: int, start: Event, results: Any) -> None:
    store = SyncMemoryStore(Path(home), _settings(processes, ops))
    latencies: list[float] = []
    acked: list[str] = []
    failed = 0
    start.wait(timeout=_RESULT_TIMEOUT_S)
    for op in range(ops):
        entry = _entry(worker, op)
        began = time.perf_counter()
        result = store.add(person_id=PERSON, target="memory", content=entry, is_admin=False).result
        latencies.append((time.perf_counter() - began) * 1000.0)
        if result.success:
            acked.append(entry)
        else:
            failed += 1
    results.put((latencies, acked, failed))


def _percentile(sorted_values: list[float], pct: float) -> float:
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def _collect(results: Any, workers: Sequence[BaseProcess]) -> list[tuple[list[float], list[str], int]]:
    collected: list[tuple[list[float], list[str], int]] = []
    deadline = time.monotonic() + _RESULT_TIMEOUT_S
    while len(collected) < len(workers):
        if time.monotonic() > deadline:
            raise BenchWorkerError(f"only {len(collected)} of {len(workers)} workers reported in time")
        try:
            collected.append(results.get(timeout=0.5))
        except queue.Empty:
            dead = [p.exitcode for p in workers if p.exitcode not in (None, 0)]
            if dead:
                raise BenchWorkerError(f"benchmark worker exited with codes {dead}") from None
    return collected


def run(home: Path, processes: int, ops: int) -> dict[str, float | int]:
    """Run the benchmark under ``home``; returns p50_ms, p99_ms, ok, failed, lost (+ wall time)."""
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    results = ctx.Queue()
    workers = [
        ctx.Process(target=_worker, args=(str(home), n, ops, processes, start, results))
        for n in range(processes)
    ]
    for proc in workers:
        proc.start()
    began = time.perf_counter()
    start.set()
    collected = _collect(results, workers)
    wall = time.perf_counter() - began
    for proc in workers:
        proc.join(timeout=_RESULT_TIMEOUT_S)

    latencies = sorted(lat for lats, _, _ in collected for lat in lats)
    acked = {entry for _, entries, _ in collected for entry in entries}
    on_disk = set(
        SyncMemoryStore(home, _settings(processes, ops)).view(person_id=PERSON, target="memory").entries
    )
    return {
        "p50_ms": round(_percentile(latencies, 50), 3),
        "p99_ms": round(_percentile(latencies, 99), 3),
        "ok": len(acked),
        "failed": sum(failed for _, _, failed in collected),
        "lost": len(acked - on_disk),
        "wall_s": round(wall, 3),
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry: print one JSON object with the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=None, help="home directory (default: a temp dir)")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--ops", type=int, default=50)
    args = parser.parse_args(argv)
    if args.home is not None:
        figures = run(args.home, args.processes, args.ops)
    else:
        with tempfile.TemporaryDirectory(prefix="mnemogate-bench-") as home:
            figures = run(Path(home), args.processes, args.ops)
    print(json.dumps({"bench": "memory", "processes": args.processes, "ops": args.ops, **figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
