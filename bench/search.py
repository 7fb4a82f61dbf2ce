"""``mnemogate bench search``: import a generated chat corpus, then time varied session searches on it.

Invariants: the corpus (bench.corpus_chat) is generated before any clock starts; import throughput
counts parsing, redaction and the write transactions (not generation); the index catch-up after the
import is reported separately; each query is run once to warm the page cache, then ``rounds`` timed
times end to end through ``SessionSearch.search`` over the store's ``SearchIndex`` (thread hop, ranking,
snippets), across everything or scoped to one person as the tool does; the storage opens through
``open_storage`` (the default backend, SQLite) with the gateway's tables, which the importer writes;
``db_bytes`` counts every database file once the storage closed and ``text_bytes`` the UTF-8 bytes of
all message contents.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agent_core.search import SearchScope, SessionSearch
from gateway.config import StorageSettings
from gateway.storage import open_storage

from .corpus_chat import ChatTranscripts

_INDEX_TIMEOUT_S = 600.0
_DB_SUFFIXES = ("", "-wal", "-shm", "-journal")


def run(
    home: Path,
    messages: int,
    person: bool,
    *,
    storage: StorageSettings | None = None,
    rounds: int = 3,
    queries: int = 50,
) -> dict[str, object]:
    """Run the benchmark in a fresh directory under ``home`` (removed afterwards); return the figures.

    ``storage``: the backend (default SQLite in that directory; on PostgreSQL the caller's fresh schema).
    """
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-search-", dir=home))
    try:
        return asyncio.run(_run_in(workdir, messages, person, rounds, queries, storage or StorageSettings()))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def _run_in(
    workdir: Path, messages: int, person: bool, rounds: int, count: int, settings: StorageSettings
) -> dict[str, object]:
    corpus = ChatTranscripts(seed=7, persons=max(20, messages // 1_000))
    conversations = list(corpus.conversations(messages))
    text_bytes = sum(len(str(m["content"]).encode("utf-8")) for c in conversations for m in _messages(c))
    lines = [json.dumps(conversation, ensure_ascii=False) for conversation in conversations]
    queries = corpus.queries(count)
    async with open_storage(workdir, settings) as storage:
        started = time.perf_counter()
        report = await storage.imports.import_lines(lines)
        import_s = time.perf_counter() - started
        started = time.perf_counter()
        indexed = await storage.search.wait_indexed(_INDEX_TIMEOUT_S)
        index_s = time.perf_counter() - started
        search = SessionSearch(storage.search)
        started = time.perf_counter()
        prepare_s = time.perf_counter() - started
        scope = SearchScope.person(corpus.persons[1]) if person else SearchScope.all_conversations()
        timings, empty = await _time_queries(search, scope, queries, rounds)
    samples = sorted(ms for per_query in timings.values() for ms in per_query)
    slowest = sorted(((max(v), q) for q, v in timings.items()), reverse=True)[:3]
    return {
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
