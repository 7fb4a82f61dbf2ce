"""``VectorMatrix``: a process's in-memory copy of the stored window vectors, searched by brute force.

Invariants: rows are only ever appended, in the order of the backend's window ids, and each batch of new
rows is read from the store once (``loaded_up_to``), so a search never reads every vector from disk; a
search scores only the rows its scope allows (a conversation filter and an excluded segment) and returns
window ids with their cosine similarity, best first; one lock guards appends while searches read a
consistent prefix. A window deleted after it was loaded may still be returned: callers keep only the ids
their own snapshot still holds. Brute force (one float32 matrix-vector product) costs ~1.5 ms for 50,000
windows here, below what an approximate index would save at these sizes.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

_GROW = 1.5
_A = TypeVar("_A", bound=npt.NDArray[Any])


@dataclass(frozen=True, slots=True)
class VectorRow:
    """One stored window vector with what scoping needs."""

    window_id: int
    conversation_id: str
    segment_id: str
    vector: npt.NDArray[np.float32]


class VectorMatrix:
    """The window vectors of one index (one model, one store identity), growing as windows are embedded."""

    def __init__(self, dim: int, identity: str) -> None:
        """``identity``: what the vectors belong to (store, model, generation); another needs a new matrix."""
        self.dim = dim
        self.identity = identity
        self.loaded_up_to = 0
        self._lock = threading.Lock()
        self._size = 0
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)
        self._conversations = np.zeros(0, dtype=np.int32)
        self._segments = np.zeros(0, dtype=np.int32)
        self._conversation_index: dict[str, int] = {}
        self._segment_index: dict[str, int] = {}

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        return int(
            self._vectors.nbytes + self._ids.nbytes + self._conversations.nbytes + self._segments.nbytes
        )

    def append(self, rows: Sequence[VectorRow], loaded_up_to: int) -> None:
        """Add rows (window ids above every id held) and record how far the store was read."""
        with self._lock:
            if rows:
                self._reserve(self._size + len(rows))
                end = self._size + len(rows)
                block = slice(self._size, end)
                self._vectors[block] = np.stack([row.vector for row in rows])
                self._ids[block] = [row.window_id for row in rows]
                self._conversations[block] = [
                    self._conversation_index.setdefault(row.conversation_id, len(self._conversation_index))
                    for row in rows
                ]
                self._segments[block] = [
                    self._segment_index.setdefault(row.segment_id, len(self._segment_index)) for row in rows
                ]
                self._size = end
            self.loaded_up_to = max(self.loaded_up_to, loaded_up_to)

    def nearest(
        self,
        query: npt.NDArray[np.float32],
        limit: int,
        *,
        conversations: Collection[str] | None = None,
        excluded_segment: str | None = None,
    ) -> list[tuple[int, float]]:
        """``(window_id, cosine)`` of the ``limit`` rows most similar to ``query``, best first, in scope."""
        with self._lock:
            size = self._size
            vectors, ids = self._vectors[:size], self._ids[:size]
            conv, segs = self._conversations[:size], self._segments[:size]
            conv_index = (
                None
                if conversations is None
                else [self._conversation_index[c] for c in conversations if c in self._conversation_index]
            )
            excluded = self._segment_index.get(excluded_segment) if excluded_segment else None
        if size == 0 or limit <= 0 or (conv_index is not None and not conv_index):
            return []
        mask = None if conv_index is None else np.isin(conv, np.asarray(conv_index, dtype=np.int32))
        if excluded is not None:
            keep = segs != excluded
            mask = keep if mask is None else mask & keep
        rows = np.arange(size) if mask is None else np.flatnonzero(mask)
        if rows.size == 0:
            return []
        scores = (vectors if mask is None else vectors[rows]) @ np.asarray(query, dtype=np.float32)
        take = min(limit, scores.size)
        best = np.argpartition(-scores, take - 1)[:take]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(ids[rows[i]]), float(scores[i])) for i in best]

    def _reserve(self, wanted: int) -> None:
        capacity = self._vectors.shape[0]
        if wanted <= capacity:
            return
        new = max(wanted, int(capacity * _GROW) + 64)
        self._vectors = _grown(self._vectors, (new, self.dim))
        self._ids = _grown(self._ids, (new,))
        self._conversations = _grown(self._conversations, (new,))
        self._segments = _grown(self._segments, (new,))


def _grown(array: _A, shape: tuple[int, ...]) -> _A:
    out = np.zeros(shape, dtype=array.dtype)
    out[: array.shape[0]] = array
    return cast(_A, out)
