"""``mnemogate bench store``: N OS processes append M messages each to one state.db through StateStore.

Invariants: latency is measured in each writer around one awaited append; afterwards every message is
checked present exactly once and findable by full-text search; ``index_lag_ms_max`` is the longest time
from an append's acknowledgement until the search index covered it (sampled by the parent every 10 ms);
``db_bytes`` counts every database file (state.db, search.db, WAL, SHM) once all stores have closed.
``writer_cpu_ms_per_msg`` is the writers' own CPU (user + system, each process from the barrier to its last
append) per acknowledged message; ``cpu_bound_msgs_per_s`` the pace the machine's cores would allow were they
spent on that alone (on PostgreSQL with the server's CPU per message added: bench.store_postgres), a ceiling
that says whether a throughput target fits the machine at all.
With ``semantic``, every writer opens its store with the embedding model (loaded before the clock starts),
so one of them embeds search windows in the background while all append; the parent samples the semantic
index every 0.5 s: ``semantic_pending_max`` is the largest backlog of windows without a vector it saw,
``semantic_pending_at_end`` the backlog when the writes ended, and ``semantic_windows_per_s`` the rate the
background embedder kept while the writers ran; then the parent embeds alone for ``_DRAIN_S`` seconds
(``semantic_drain_windows_per_s``) and ``semantic_drain_s`` is how long the whole backlog takes at that pace.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Barrier
from pathlib import Path

from agent_core.search import SemanticSettings, load_embedder
from agent_core.storage import NewMessage, Principal, StateError
from agent_core.storage.search_windows import Embedder
from agent_core.storage.sqlite import StateSettings, StateStore

from .store_corpus import ChatCorpus, marker

_PRELOAD_CHUNK = 2_000
_SAMPLE_S = 0.01
_INDEX_TIMEOUT_S = 300.0
_DRAIN_S = 15.0


@dataclass(frozen=True)
class WriterReport:
    """What one writer process measured; written as JSON for the parent."""

    writer: int
    conversation_id: str
    latencies: list[float]
    acks: list[tuple[int, float]]
    errors: list[str]
    started: float
    finished: float
    retries: int
    text_bytes: int
    cpu_s: float

    @classmethod
    def load(cls, path: Path) -> WriterReport:
        raw = json.loads(path.read_text())
        raw["acks"] = [(int(i), float(t)) for i, t in raw["acks"]]
        return cls(**raw)


def run(
    home: Path,
    processes: int,
    messages: int,
    preload: int,
    *,
    settings: StateSettings | None = None,
    semantic: bool = False,
) -> dict[str, float | int]:
    """Run the benchmark in a fresh directory under ``home`` (removed afterwards); return the figures."""
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-store-", dir=home))
    try:
        return _run_in(workdir, processes, messages, preload, settings or StateSettings(), semantic)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_in(
    workdir: Path, processes: int, messages: int, preload: int, settings: StateSettings, semantic: bool
) -> dict[str, float | int]:
    preload_bytes = asyncio.run(_preload(workdir, preload, settings))
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(processes + 1)
    paths = [workdir / f"writer-{i}.json" for i in range(processes)]
    workers: list[BaseProcess] = [
        context.Process(
            target=_writer_main, args=(workdir, i, messages, barrier, str(paths[i]), settings, semantic)
        )
        for i in range(processes)
    ]
    for worker in workers:
        worker.start()
    samples, pending = asyncio.run(_monitor(workdir, barrier, workers, settings, _model(semantic)))
    for worker in workers:
        worker.join()
    reports = [WriterReport.load(path) for path in paths if path.exists()]
    figures = _figures(reports, samples, missing=(processes - len(reports)) * messages)
    if semantic:
        figures.update(_semantic_figures(reports, pending))
        figures.update(asyncio.run(_drain(workdir, settings, _model(semantic))))
    figures.update(asyncio.run(_verify(workdir, reports, settings)))
    figures["db_bytes"] = sum(p.stat().st_size for p in workdir.iterdir() if ".db" in p.name)
    figures["text_bytes"] = preload_bytes + sum(r.text_bytes for r in reports)
    return figures


async def _preload(workdir: Path, count: int, settings: StateSettings) -> int:
    """Bulk-load ``count`` messages (2,000 per transaction) and wait until they are all indexed."""
    if count <= 0:
        return 0
    corpus = ChatCorpus(seed=10_000)
    text_bytes = 0
    async with StateStore(workdir, settings) as store:
        conversation = await store.ensure_conversation("bench:preload", Principal(person_id="preload"))
        for start in range(0, count, _PRELOAD_CHUNK):
            batch = [
                NewMessage("user" if i % 2 else "assistant", corpus.message(marker(99_999, i)))
                for i in range(start, min(count, start + _PRELOAD_CHUNK))
            ]
            text_bytes += sum(len((m.content or "").encode()) for m in batch)
            await store.append_messages(conversation.tip_session_id, batch)
        if not await store.wait_indexed(_INDEX_TIMEOUT_S):
            raise RuntimeError("the preloaded messages were not indexed in time")
    return text_bytes


def _model(semantic: bool) -> Embedder | None:
    if not semantic:
        return None
    loaded = load_embedder(SemanticSettings())
    if loaded.embedder is None:
        raise RuntimeError(loaded.reason)
    return loaded.embedder


async def _monitor(
    workdir: Path,
    barrier: Barrier,
    workers: Sequence[BaseProcess],
    settings: StateSettings,
    model: Embedder | None,
) -> tuple[list[tuple[float, int]], list[tuple[float, int, int]]]:
    """Release the writers together, then sample (monotonic time, indexed-through id) until indexed, and
    (time, windows, embedded) of the semantic index every 0.5 s when a model is given."""
    quiet = settings.model_copy(update={"index_enabled": False})
    async with StateStore(workdir, quiet, embedder=model) as store:
        await asyncio.to_thread(barrier.wait)
        samples: list[tuple[float, int]] = []
        pending: list[tuple[float, int, int]] = []
        next_semantic = 0.0
        for _ in range(int(_INDEX_TIMEOUT_S / _SAMPLE_S)):
            samples.append((time.monotonic(), await store.index_position()))
            if model is not None and time.monotonic() >= next_semantic:
                status = await store.semantic_status()
                pending.append((time.monotonic(), status.windows, status.embedded))
                next_semantic = time.monotonic() + 0.5
            if not any(w.is_alive() for w in workers) and await store.index_lag() == 0:
                break
            await asyncio.sleep(_SAMPLE_S)
        return samples, pending


def _writer_main(
    workdir: Path,
    writer: int,
    count: int,
    barrier: Barrier,
    result_path: str,
    settings: StateSettings,
    semantic: bool = False,
) -> None:
    report = asyncio.run(_write(workdir, writer, count, barrier, settings, _model(semantic)))
    Path(result_path).write_text(json.dumps(asdict(report)))


async def _write(
    workdir: Path, writer: int, count: int, barrier: Barrier, settings: StateSettings, model: Embedder | None
) -> WriterReport:
    corpus = ChatCorpus(seed=writer)
    texts = [corpus.message(marker(writer, seq)) for seq in range(count)]
    latencies: list[float] = []
    acks: list[tuple[int, float]] = []
    errors: list[str] = []
    async with StateStore(workdir, settings, embedder=model) as store:
        conversation = await store.ensure_conversation(f"bench:{writer}", Principal(person_id=f"w{writer}"))
        segment = conversation.tip_session_id
        await asyncio.to_thread(barrier.wait)
        started, cpu_started = time.monotonic(), time.process_time()
        for seq, text in enumerate(texts):
            message = NewMessage("user" if seq % 2 == 0 else "assistant", text)
            before = time.perf_counter()
            try:
                message_id = await store.append_message(segment, message)
            except StateError as exc:
                errors.append(str(exc))
                continue
            latencies.append(time.perf_counter() - before)
            acks.append((message_id, time.monotonic()))
        finished, cpu_s = time.monotonic(), time.process_time() - cpu_started
        retries = store.write_retries
        # Stay until search covers everything: the last writer standing may be the one indexing.
        await store.wait_indexed(_INDEX_TIMEOUT_S)
    return WriterReport(
        writer, conversation.id, latencies, acks, errors, started, finished, retries,
        sum(len(t.encode()) for t in texts), cpu_s,
    )  # fmt: skip


def _figures(
    reports: Sequence[WriterReport],
    samples: list[tuple[float, int]],
    *,
    missing: int,
    server_cpu_s: float | None = None,
) -> dict[str, float | int]:
    """The writers' figures; ``server_cpu_s``: what a database server spent meanwhile (PostgreSQL)."""
    latencies = sorted(x for r in reports for x in r.latencies)
    elapsed = max(r.finished for r in reports) - min(r.started for r in reports)
    return {
        **_cpu_figures(sum(r.cpu_s for r in reports), server_cpu_s, len(latencies)),
        "throughput_msgs_per_s": round(len(latencies) / max(elapsed, 1e-9), 1),
        "p50_ms": round(_percentile(latencies, 0.50) * 1000, 3),
        "p99_ms": round(_percentile(latencies, 0.99) * 1000, 3),
        "max_ms": round((latencies[-1] if latencies else 0.0) * 1000, 3),
        "errors": sum(len(r.errors) for r in reports) + missing,
        "write_retries": sum(r.retries for r in reports),
        "index_lag_ms_max": round(_index_lag_max(reports, samples) * 1000, 1),
    }


def _cpu_figures(writer_s: float, server_s: float | None, messages: int) -> dict[str, float | int]:
    per_message = {"writer": writer_s * 1000 / max(messages, 1)}
    if server_s is not None:
        per_message["server"] = server_s * 1000 / max(messages, 1)
    spent_ms, cores = sum(per_message.values()), os.cpu_count() or 1
    return {
        **{f"{side}_cpu_ms_per_msg": round(ms, 3) for side, ms in per_message.items()},
        "cpu_cores": cores,
        "cpu_bound_msgs_per_s": round(cores * 1000 / spent_ms, 1) if spent_ms > 0 else 0.0,
    }


def _semantic_figures(
    reports: Sequence[WriterReport], pending: list[tuple[float, int, int]]
) -> dict[str, float | int]:
    """The semantic backlog (windows without a vector) over the run, and the embedder's pace meanwhile."""
    if not pending:
        return {}
    finished = max(r.finished for r in reports)
    during = [p for p in pending if p[0] <= finished] or pending[:1]
    first, last = pending[0], during[-1]
    seconds = last[0] - first[0]
    return {
        "semantic_pending_max": max(windows - embedded for _, windows, embedded in pending),
        "semantic_pending_at_end": last[1] - last[2],
        "semantic_windows": pending[-1][1],
        "semantic_windows_per_s": round((last[2] - first[2]) / seconds, 2) if seconds > 0 else 0.0,
    }


async def _drain(workdir: Path, settings: StateSettings, model: Embedder | None) -> dict[str, float | int]:
    """Embed alone for ``_DRAIN_S`` seconds: the pace at which the backlog left by the writers drains."""
    async with StateStore(workdir, settings, embedder=model) as store:
        first = await store.semantic_status()
        started = time.monotonic()
        await asyncio.sleep(_DRAIN_S)
        last = await store.semantic_status()
        rate = (last.embedded - first.embedded) / (time.monotonic() - started)
    return {
        "semantic_drain_windows_per_s": round(rate, 2),
        "semantic_drain_s": round(first.pending / rate, 1) if rate > 0 else -1,
    }


def _percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def _index_lag_max(reports: Sequence[WriterReport], samples: list[tuple[float, int]]) -> float:
    positions = [position for _, position in samples]
    worst = 0.0
    for report in reports:
        for message_id, acked_at in report.acks:
            first = bisect.bisect_left(positions, message_id)
            if first == len(samples):
                return float("inf")
            worst = max(worst, samples[first][0] - acked_at)
    return worst


async def _verify(workdir: Path, reports: Sequence[WriterReport], settings: StateSettings) -> dict[str, int]:
    """Every acknowledged message present exactly once and found by a search for its marker."""
    lost = duplicated = unsearchable = 0
    async with StateStore(workdir, settings) as store:
        if not await store.wait_indexed(_INDEX_TIMEOUT_S):
            raise RuntimeError("the search index did not catch up")
        for report in reports:
            stored = await store.conversation_messages(report.conversation_id)
            prefix = marker(report.writer, 0)[:-1]
            tokens = [next(w for w in (m.content or "").split() if w.startswith(prefix)) for m in stored]
            duplicated += len(tokens) - len(set(tokens))
            lost += len({i for i, _ in report.acks} - {m.id for m in stored})
            for message, token in zip(stored, tokens, strict=True):
                hits = await store.fts_match(f'"{token}"', None, limit=3)
                unsearchable += message.id not in {hit.message_id for hit in hits}
    return {"lost": lost, "duplicated": duplicated, "unsearchable": unsearchable}
