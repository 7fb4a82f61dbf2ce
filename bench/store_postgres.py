"""``mnemogate bench store --backend postgres``: N OS processes append M messages each through the storage
port onto one PostgreSQL schema, with the figures and checks of the SQLite store benchmark (bench.store).

Invariants: the schema is the caller's (a fresh one: ``mnemogate bench`` creates and drops it); every
process opens the storage through ``open_storage`` as a host would (its own pool, the migrations under the
advisory lock); latency is measured in each writer around one awaited append (one transaction, so one
commit's round trips); afterwards every acknowledged message is checked present exactly once and found by
a search for its marker through the ``SearchIndex`` port; ``index_lag_ms_max`` is measured as on SQLite
from the index's watermark, sampled by the parent every 10 ms. ``server_cpu_ms_per_msg`` is the CPU the
database server's processes spent from the writers' release until they had all exited (with the server on
this machine; the parent's 10 ms samples included), per acknowledged message. ``semantic``: as on SQLite
(bench.store), the writers' storage carries the embedding model, and the semantic backlog is sampled every
0.5 s.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Barrier
from pathlib import Path

from agent_core.search import plan_query
from agent_core.storage import NewMessage, Principal, StateError
from agent_core.storage.postgres.settings import PostgresSettings
from agent_core.storage.search_index import SearchRequest, SearchScope
from agent_core.storage.search_windows import Embedder
from gateway.config import StorageSettings
from gateway.storage import open_storage
from gateway.storage.backend import Storage
from gateway.storage.postgres.scratch import ServerActivity, server_activity

from .store import WriterReport, _figures, _model, _semantic_figures
from .store_corpus import ChatCorpus, marker

_PRELOAD_CHUNK = 2_000
_SAMPLE_S = 0.01
_INDEX_TIMEOUT_S = 300.0


def run(
    home: Path,
    processes: int,
    messages: int,
    preload: int,
    *,
    postgres: PostgresSettings,
    semantic: bool = False,
) -> dict[str, float | int]:
    """Run the benchmark on the schema ``postgres`` names (reports in a temporary directory of ``home``)."""
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-store-", dir=home))
    storage = StorageSettings(backend="postgres", postgres=postgres)
    try:
        return _run_in(workdir, processes, messages, preload, storage, semantic)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_in(
    workdir: Path, processes: int, messages: int, preload: int, storage: StorageSettings, semantic: bool
) -> dict[str, float | int]:
    preload_bytes = asyncio.run(_preload(workdir, preload, storage))
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(processes + 1)
    paths = [workdir / f"writer-{i}.json" for i in range(processes)]
    workers: list[BaseProcess] = [
        context.Process(
            target=_writer_main, args=(workdir, i, messages, barrier, str(paths[i]), storage, semantic)
        )
        for i in range(processes)
    ]
    for worker in workers:
        worker.start()
    try:
        samples, pending, released = asyncio.run(
            _monitor(workdir, barrier, workers, storage, _model(semantic))
        )
    finally:
        for worker in workers:
            worker.join(120)
            if worker.is_alive():
                worker.kill()
    server = server_activity(storage.postgres).minus(released).cpu_s
    reports = [WriterReport.load(path) for path in paths if path.exists()]
    figures = _figures(reports, samples, missing=(processes - len(reports)) * messages, server_cpu_s=server)
    figures.update(_semantic_figures(reports, pending) if semantic else {})
    figures.update(asyncio.run(_verify(workdir, reports, storage)))
    figures["text_bytes"] = preload_bytes + sum(r.text_bytes for r in reports)
    return figures


async def _preload(workdir: Path, count: int, settings: StorageSettings) -> int:
    """Bulk-load ``count`` messages (2,000 per transaction); also migrates the schema before the race."""
    corpus = ChatCorpus(seed=10_000)
    text_bytes = 0
    async with open_storage(workdir, settings) as storage:
        if count <= 0:
            return 0
        conversation = await storage.agent.ensure_conversation(
            "bench:preload", Principal(person_id="preload")
        )
        for start in range(0, count, _PRELOAD_CHUNK):
            batch = [
                NewMessage("user" if i % 2 else "assistant", corpus.message(marker(99_999, i)))
                for i in range(start, min(count, start + _PRELOAD_CHUNK))
            ]
            text_bytes += sum(len((m.content or "").encode()) for m in batch)
            await storage.agent.append_messages(conversation.tip_session_id, batch)
        if not await storage.search.wait_indexed(_INDEX_TIMEOUT_S):
            raise RuntimeError("the preloaded messages were not indexed in time")
    return text_bytes


async def _monitor(
    workdir: Path,
    barrier: Barrier,
    workers: Sequence[BaseProcess],
    settings: StorageSettings,
    model: Embedder | None,
) -> tuple[list[tuple[float, int]], list[tuple[float, int, int]], ServerActivity]:
    """Release the writers together, then sample (monotonic time, indexed-through id) until indexed, and
    the semantic backlog every 0.5 s when a model is given; also the server's counters at the release."""
    async with open_storage(workdir, settings, embedder=model) as storage:
        await asyncio.to_thread(barrier.wait)
        released = await asyncio.to_thread(server_activity, settings.postgres)
        samples: list[tuple[float, int]] = []
        pending: list[tuple[float, int, int]] = []
        next_semantic = 0.0
        for _ in range(int(_INDEX_TIMEOUT_S / _SAMPLE_S)):
            samples.append((time.monotonic(), await storage.search.index_position()))
            if model is not None and time.monotonic() >= next_semantic:
                status = await storage.search.semantic_status()
                pending.append((time.monotonic(), status.windows, status.embedded))
                next_semantic = time.monotonic() + 0.5
            if not any(w.is_alive() for w in workers) and await storage.search.index_lag() == 0:
                break
            await asyncio.sleep(_SAMPLE_S)
        return samples, pending, released


def _writer_main(
    workdir: Path,
    writer: int,
    count: int,
    barrier: Barrier,
    result_path: str,
    settings: StorageSettings,
    semantic: bool = False,
) -> None:
    report = asyncio.run(_write(workdir, writer, count, barrier, settings, _model(semantic)))
    Path(result_path).write_text(json.dumps(asdict(report)))


async def _write(
    workdir: Path,
    writer: int,
    count: int,
    barrier: Barrier,
    settings: StorageSettings,
    model: Embedder | None,
) -> WriterReport:
    corpus = ChatCorpus(seed=writer)
    texts = [corpus.message(marker(writer, seq)) for seq in range(count)]
    latencies: list[float] = []
    acks: list[tuple[int, float]] = []
    errors: list[str] = []
    async with open_storage(workdir, settings, embedder=model) as storage:
        agent = storage.agent
        conversation = await agent.ensure_conversation(f"bench:{writer}", Principal(person_id=f"w{writer}"))
        segment = conversation.tip_session_id
        await asyncio.to_thread(barrier.wait)
        started, cpu_started = time.monotonic(), time.process_time()
        for seq, text in enumerate(texts):
            message = NewMessage("user" if seq % 2 == 0 else "assistant", text)
            before = time.perf_counter()
            try:
                message_id = await agent.append_message(segment, message)
            except StateError as exc:
                errors.append(str(exc))
                continue
            latencies.append(time.perf_counter() - before)
            acks.append((message_id, time.monotonic()))
        finished, cpu_s = time.monotonic(), time.process_time() - cpu_started
        retries = storage.stats().write_retries
    return WriterReport(
        writer, conversation.id, latencies, acks, errors, started, finished, retries,
        sum(len(t.encode()) for t in texts), cpu_s,
    )  # fmt: skip


async def _verify(
    workdir: Path, reports: Sequence[WriterReport], settings: StorageSettings
) -> dict[str, int]:
    """Every acknowledged message present exactly once and found by a search for its marker."""
    lost = duplicated = unsearchable = 0
    async with open_storage(workdir, settings) as storage:
        if not await storage.search.wait_indexed(_INDEX_TIMEOUT_S):
            raise RuntimeError("the search index did not catch up")
        for report in reports:
            stored = await storage.agent.conversation_messages(report.conversation_id)
            prefix = marker(report.writer, 0)[:-1]
            tokens = [next(w for w in (m.content or "").split() if w.startswith(prefix)) for m in stored]
            duplicated += len(tokens) - len(set(tokens))
            lost += len({i for i, _ in report.acks} - {m.id for m in stored})
            for message, token in zip(stored, tokens, strict=True):
                unsearchable += message.id not in await _found(storage, token)
    return {"lost": lost, "duplicated": duplicated, "unsearchable": unsearchable}


async def _found(storage: Storage, token: str) -> set[int]:
    request = SearchRequest(plan_query(token), SearchScope.all_conversations(), want=3)
    snapshot = await storage.search.search_messages(request)
    return {hit.message.id for hit in snapshot.hits}
