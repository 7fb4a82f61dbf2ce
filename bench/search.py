"""``mnemogate bench search``: import a generated chat corpus, then time varied session searches on it.

Invariants: the corpus (bench.corpus_chat) is generated before any clock starts; import throughput
counts parsing, redaction and the write transactions (not generation); the index catch-up after the
import is reported separately; each query is run once to warm the page cache, then ``rounds`` timed
times end to end through ``SessionSearch.search`` over the store's ``SearchIndex`` (thread hop, ranking,
snippets), across everything or scoped to one person as the tool does; the storage opens through
``open_storage`` (the default backend, SQLite) with the gateway's tables, which the importer writes;
``db_bytes`` counts every database file once the storage closed and ``text_bytes`` the UTF-8 bytes of
all message contents.

``semantic`` (the semantic side of search): ``off``; ``model`` — the real model embeds every window before
the clock starts (hours at 100,000 messages on 2 cores: for small corpora); ``synthetic`` — the windows get
random unit vectors of the model's dimension under the model's id (filled in seconds), while every query
is embedded by the real model, so the timed searches do exactly the work they do in production (query
embedding, brute-force nearest windows over every vector, fusion) on vectors whose content does not
matter for speed. ``query_embed_*`` time the query embedding alone; ``rss_mb`` is the process's peak RSS.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from agent_core.search import SearchScope, SearchSettings, SemanticSettings, SessionSearch, load_embedder
from agent_core.storage.search_index import SearchIndex
from agent_core.storage.search_windows import Embedder, Vector
from gateway.config import StorageSettings
from gateway.storage import open_storage

from .corpus_chat import ChatTranscripts

_INDEX_TIMEOUT_S = 600.0
_EMBED_TIMEOUT_S = 6 * 3600.0
SemanticMode = Literal["off", "synthetic", "model"]


class SyntheticVectors:
    """Random unit vectors (seeded by the text) under a real model's id and dimension: the stored side of
    a latency benchmark, never a model."""

    def __init__(self, model: Embedder) -> None:
        self._model = model

    @property
    def model_id(self) -> str:
        return self._model.model_id

    @property
    def dim(self) -> int:
        return self._model.dim

    @property
    def similarity_floor(self) -> float:
        return self._model.similarity_floor

    def embed_query(self, text: str) -> Vector:
        return self._model.embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            vector = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[row] = vector / np.linalg.norm(vector)
        return out


_DB_SUFFIXES = ("", "-wal", "-shm", "-journal")


def run(
    home: Path,
    messages: int,
    person: bool,
    *,
    storage: StorageSettings | None = None,
    rounds: int = 3,
    queries: int = 50,
    semantic: SemanticMode = "off",
) -> dict[str, object]:
    """Run the benchmark in a fresh directory under ``home`` (removed afterwards); return the figures.

    ``storage``: the backend (default SQLite in that directory; on PostgreSQL the caller's fresh schema).
    """
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-search-", dir=home))
    try:
        return asyncio.run(
            _run_in(workdir, messages, person, rounds, queries, storage or StorageSettings(), semantic)
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def _run_in(
    workdir: Path,
    messages: int,
    person: bool,
    rounds: int,
    count: int,
    settings: StorageSettings,
    semantic: SemanticMode,
) -> dict[str, object]:
    corpus = ChatTranscripts(seed=7, persons=max(20, messages // 1_000))
    conversations = list(corpus.conversations(messages))
    text_bytes = sum(len(str(m["content"]).encode("utf-8")) for c in conversations for m in _messages(c))
    lines = [json.dumps(conversation, ensure_ascii=False) for conversation in conversations]
    queries = corpus.queries(count)
    model = _model(semantic)
    stored: Embedder | None = (
        None if model is None else SyntheticVectors(model) if semantic == "synthetic" else model
    )
    figures: dict[str, object] = {"semantic": semantic}
    async with open_storage(workdir, settings, embedder=stored) as storage:
        started = time.perf_counter()
        report = await storage.imports.import_lines(lines)
        import_s = time.perf_counter() - started
        started = time.perf_counter()
        indexed = await storage.search.wait_indexed(_INDEX_TIMEOUT_S)
        index_s = time.perf_counter() - started
        if model is not None:
            started = time.perf_counter()
            figures["windows"] = await _embedded(storage.search)
            figures["embed_s"] = round(time.perf_counter() - started, 1)
            figures.update(_query_embedding(model, queries))
        search = SessionSearch(storage.search, SearchSettings(), embedder=model)
        started = time.perf_counter()
        prepare_s = time.perf_counter() - started
        scope = SearchScope.person(corpus.persons[1]) if person else SearchScope.all_conversations()
        timings, empty = await _time_queries(search, scope, queries, rounds)
        modes = {(await search.search(q, scope, limit=5, summarise=False)).mode for q in queries[:5]}
        figures["modes"] = sorted(modes)
    samples = sorted(ms for per_query in timings.values() for ms in per_query)
    slowest = sorted(((max(v), q) for q, v in timings.items()), reverse=True)[:3]
    figures["rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return {
        **figures,
        "mode": "person" if person else "all",
        "messages": report.messages,
        "conversations": report.conversations,
        "persons": len(corpus.persons),
        "import_errors": len(report.errors),
        "import_s": round(import_s, 3),
        "import_msgs_per_s": round(report.messages / import_s) if import_s > 0 else 0,
        "index_catchup_s": round(index_s, 3),
        "indexed": indexed,
        "scope_index_build_ms": round(prepare_s * 1000, 1),
        "queries": len(queries),
        "samples": len(samples),
        "queries_without_results": empty,
        "p50_ms": round(_quantile(samples, 0.50), 2),
        "p90_ms": round(_quantile(samples, 0.90), 2),
        "p99_ms": round(_quantile(samples, 0.99), 2),
        "max_ms": round(samples[-1], 2) if samples else 0.0,
        "mean_ms": round(statistics.fmean(samples), 2) if samples else 0.0,
        "slowest": [{"query": q, "ms": round(ms, 2)} for ms, q in slowest],
        "db_bytes": _db_bytes(workdir),
        "text_bytes": text_bytes,
    }


async def _time_queries(
    search: SessionSearch, scope: SearchScope, queries: list[str], rounds: int
) -> tuple[dict[str, list[float]], int]:
    timings: dict[str, list[float]] = {}
    empty = 0
    for query in queries:
        warm = await search.search(query, scope, limit=5)
        empty += not warm.conversations
        for _ in range(rounds):
            started = time.perf_counter()
            await search.search(query, scope, limit=5)
            timings.setdefault(query, []).append((time.perf_counter() - started) * 1000)
    return timings, empty


def _model(semantic: SemanticMode) -> Embedder | None:
    if semantic == "off":
        return None
    loaded = load_embedder(SemanticSettings())
    if loaded.embedder is None:
        raise RuntimeError(loaded.reason)
    return loaded.embedder


async def _embedded(index: SearchIndex) -> int:
    """Wait until every window has its vector (progress on stderr); how many windows there are."""
    deadline = time.monotonic() + _EMBED_TIMEOUT_S
    while True:
        status = await index.semantic_status()
        print(f"\rembedding windows: {status.embedded}/{status.windows}", end="", file=sys.stderr)
        if status.state == "ready":
            print(file=sys.stderr)
            return status.windows
        if time.monotonic() > deadline:
            raise TimeoutError(f"windows not embedded in time: {status}")
        await asyncio.sleep(1.0)


def _query_embedding(model: Embedder, queries: list[str]) -> dict[str, float]:
    """The query embedding alone, once per query (a cold call each: nothing is cached)."""
    model.embed_query("warm up")
    samples = []
    for query in queries:
        started = time.perf_counter()
        model.embed_query(query)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {
        "query_embed_p50_ms": round(_quantile(samples, 0.5), 2),
        "query_embed_p99_ms": round(_quantile(samples, 0.99), 2),
    }


def _messages(conversation: dict[str, object]) -> list[dict[str, object]]:
    messages = conversation["messages"]
    assert isinstance(messages, list)
    return messages


def _quantile(samples: list[float], q: float) -> float:
    if not samples:
        return 0.0
    return samples[min(len(samples) - 1, int(q * len(samples)))]


def _db_bytes(workdir: Path) -> int:
    total = 0
    for name in ("state.db", "search.db"):
        for suffix in _DB_SUFFIXES:
            path = workdir / (name + suffix)
            if path.exists():
                total += path.stat().st_size
    return total
