"""Read-side of search windows on SQLite: windows of hit messages, nearest windows, participant names.

Every function takes a reader connection with the sidecar attached as ``idx`` and reads inside the
caller's snapshot. Invariants: nearest windows come from the process's ``VectorMatrix`` (brought up to date
from ``idx.window_vectors`` under one lock, only rows above what it already holds), and are then checked
against ``idx.windows`` in the same snapshot, so a window dropped since it was loaded is never returned;
scoping is the caller's ``MatchFilter`` (the scope's conversations, never the live tip segment).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence

import numpy as np

from ..search_index import WindowHit, WindowRef
from ..search_windows import SemanticState, SemanticStatus, decode_vectors
from ..vector_matrix import VectorMatrix, VectorRow
from .search_reads import MatchFilter
from .window_store import semantic_progress

_LOAD_BATCH = 20_000


class VectorCache:
    """The process's ``VectorMatrix`` of one sidecar; new when the sidecar, model or generation changes."""

    def __init__(self, model_id: str, dim: int) -> None:
        self.model_id = model_id
        self.dim = dim
        self._lock = threading.Lock()
        self._matrix: VectorMatrix | None = None

    def current(self, conn: sqlite3.Connection) -> VectorMatrix | None:
        """The matrix holding every vector of the attached sidecar, or None while it holds another model's."""
        identity = _identity(conn, self.model_id)
        if identity is None:
            return None
        with self._lock:
            matrix = self._matrix
            if matrix is None or matrix.identity != identity:
                matrix = self._matrix = VectorMatrix(self.dim, identity)
            while True:
                rows = _vector_rows(conn, matrix.loaded_up_to, self.dim)
                if not rows:
                    return matrix
                matrix.append(rows, rows[-1].window_id)


def _identity(conn: sqlite3.Connection, model_id: str) -> str | None:
    progress = semantic_progress(conn, "idx")
    if progress is None or progress[0] != model_id:
        return None
    uuid = conn.execute("SELECT db_uuid FROM idx.progress WHERE id = 1").fetchone()
    return f"{uuid[0] if uuid else ''}:{model_id}:{progress[1]}"


def _vector_rows(conn: sqlite3.Connection, after: int, dim: int) -> list[VectorRow]:
    rows = conn.execute(
        "SELECT v.window_id, w.conversation_id, w.segment_id, v.vector FROM idx.window_vectors AS v "
        "JOIN idx.windows AS w ON w.id = v.window_id WHERE v.window_id > ? ORDER BY v.window_id LIMIT ?",
        (after, _LOAD_BATCH),
    ).fetchall()
    vectors = decode_vectors([bytes(r[3]) for r in rows], dim)
    return [VectorRow(int(r[0]), str(r[1]), str(r[2]), vectors[i]) for i, r in enumerate(rows)]


def windows_of(conn: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, tuple[WindowRef, ...]]:
    """Per message id, the stored windows holding it."""
    if not message_ids:
        return {}
    cursor = conn.execute(
        "SELECT m.message_id, w.id, w.conversation_id, w.segment_id, w.message_ids "
        "FROM idx.window_members AS m JOIN idx.windows AS w ON w.id = m.window_id "
        "WHERE m.message_id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(message_ids)),),
    )
    found: dict[int, list[WindowRef]] = {}
    for row in cursor.fetchall():
        ref = WindowRef(int(row[1]), str(row[2]), str(row[3]), tuple(int(i) for i in json.loads(row[4])))
        found.setdefault(int(row[0]), []).append(ref)
    return {message_id: tuple(refs) for message_id, refs in found.items()}


def nearest_windows(
    conn: sqlite3.Connection,
    cache: VectorCache,
    query: Sequence[float],
    where: MatchFilter,
    limit: int,
) -> tuple[list[WindowHit], bool]:
    """The windows nearest ``query`` in ``where``'s scope, best first; and whether vectors could answer."""
    matrix = cache.current(conn)
    if matrix is None:
        return [], False
    excluded = where.excluded_segment[1] if where.excluded_segment is not None else None
    nearest = matrix.nearest(
        np.asarray(query, dtype=np.float32),
        limit,
        conversations=where.conversation_ids,
        excluded_segment=excluded,
    )
    refs = _window_refs(conn, [window_id for window_id, _ in nearest])
    return [WindowHit(refs[i], score) for i, score in nearest if i in refs], True


def _window_refs(conn: sqlite3.Connection, window_ids: Sequence[int]) -> dict[int, WindowRef]:
    cursor = conn.execute(
        "SELECT id, conversation_id, segment_id, message_ids FROM idx.windows "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(window_ids)),),
    )
    return {
        int(r[0]): WindowRef(int(r[0]), str(r[1]), str(r[2]), tuple(int(i) for i in json.loads(r[3])))
        for r in cursor.fetchall()
    }


def participants(
    conn: sqlite3.Connection, words: Sequence[str], conversation_ids: Sequence[str] | None, cap: int
) -> dict[str, tuple[str, ...]]:
    """Per word of ``words`` (case-folded) that names a speaker, the conversations (of the given ones;
    None: any) where they speak, at most ``cap`` each."""
    found: dict[str, tuple[str, ...]] = {}
    allowed = None if conversation_ids is None else set(conversation_ids)
    for word in sorted({word.casefold() for word in words if word}):
        cursor = conn.execute("SELECT conversation_id FROM idx.participants WHERE name = ?", (word,))
        ids = [str(row[0]) for row in cursor if allowed is None or str(row[0]) in allowed][:cap]
        if ids:
            found[word] = tuple(ids)
    return found


def semantic_counts(conn: sqlite3.Connection, model_id: str) -> SemanticStatus:
    """How many windows exist and how many carry a vector of ``model_id``."""
    windows = int(conn.execute("SELECT count(*) FROM idx.windows").fetchone()[0])
    progress = semantic_progress(conn, "idx")
    if progress is None or progress[0] != model_id:
        return SemanticStatus("building" if windows else "ready", windows, 0, model_id)
    embedded = int(conn.execute("SELECT count(*) FROM idx.window_vectors").fetchone()[0])
    state: SemanticState = "ready" if embedded >= windows else "building"
    return SemanticStatus(state, windows, embedded, model_id)
