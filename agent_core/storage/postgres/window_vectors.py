"""Window vectors on PostgreSQL: embedding windows in batches, and the reads that search windows.

Invariants: one embedder leads across every host (``pg_try_advisory_xact_lock(EMBED_LOCK)`` and the lead in
``pending_windows``, renewed by each store); the model runs between two short transactions, never inside
one; a batch is stored only if the progress row still says what it said when the batch was read (same model,
generation and mark), so vectors are stored in window-id order, each batch exactly after the last, and a
process's ``VectorMatrix`` only ever needs the rows above what it holds; a window dropped before a store
commits gets no vector; a model change or a rebuild moves the ``generation`` and drops every vector in the
same transaction; reads run inside the caller's snapshot, and a nearest window is returned only if that
snapshot still holds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ..search_index import FoundMessage, WindowHit, WindowRef
from ..search_windows import (
    SemanticState,
    SemanticStatus,
    Turn,
    decode_vectors,
    encode_vector,
    text_digest,
    window_text,
)
from ..vector_matrix import VectorMatrix, VectorRow
from .engine import Conn
from .window_builder import EMBED_LOCK, WINDOW_LOCK, lead

_LOAD_BATCH: Final = 20_000


@dataclass(frozen=True, slots=True)
class PendingWindows:
    """Windows read for embedding: what the model must read, and the progress they continue from."""

    model_id: str
    generation: int
    after: int
    window_ids: tuple[int, ...]
    bodies: tuple[str, ...]


async def pending_windows(
    conn: Conn, model_id: str, limit: int, *, worker: str = ""
) -> PendingWindows | None:
    """Up to ``limit`` windows without a vector, with their texts (None: another process embeds).

    A short transaction of its own: the model runs after it, holding no connection, lock or transaction
    (a transaction left open across the model would hold back ``visibility.py``'s horizon, a pooled
    connection and the progress row for the whole batch)."""
    row = await (await conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (EMBED_LOCK,))).fetchone()
    if not row or not row[0] or (worker and not await lead(conn, "embedder", worker)):
        return None
    generation, up_to = await claim_model(conn, model_id)
    cursor = await conn.execute(
        "SELECT id, message_ids, speakers FROM search_windows WHERE id > %s ORDER BY id LIMIT %s",
        (up_to, limit),
    )
    windows = await cursor.fetchall()
    if not windows:
        return PendingWindows(model_id, generation, up_to, (), ())
    ids = [int(i) for w in windows for i in w[1]]
    texts_cursor = await conn.execute("SELECT id, content FROM messages WHERE id = ANY(%s)", (ids,))
    texts = {int(r[0]): str(r[1] or "") for r in await texts_cursor.fetchall()}
    bodies = tuple(
        window_text([Turn(int(i), str(s), texts.get(int(i), "")) for i, s in zip(w[1], w[2], strict=False)])
        for w in windows
    )
    return PendingWindows(model_id, generation, up_to, tuple(int(w[0]) for w in windows), bodies)


async def store_vectors(
    conn: Conn, batch: PendingWindows, vectors: npt.NDArray[np.float32], *, worker: str = ""
) -> bool:
    """Store ``batch``'s vectors and move the mark past it; False (nothing stored) when the progress moved
    since it was read (a rebuild, another model, or another embedder that took over meanwhile).

    Lock order as the builder's: the window builder's lock (``WINDOW_LOCK``, waited for) and then the
    progress row. The builder and erasure drop windows only under ``WINDOW_LOCK``, so the windows this
    transaction joins against are the ones committed after any drop, and a window dropped while the model
    ran (its segment grew, or its person was erased) gets no vector. The conditional UPDATE takes the
    progress row's lock before anything is written: a rebuild (``forget_vectors`` updates that row before
    it deletes) either waits for this transaction and then deletes what it stored, or committed first and
    this one stores nothing. Vectors are therefore stored in window-id order, each batch exactly after the
    last. The store also renews ``worker``'s lead, so a long model call does not hand the batch over."""
    if not batch.window_ids:
        return True
    if len(vectors) != len(batch.window_ids):
        raise ValueError(f"{len(vectors)} vectors for {len(batch.window_ids)} windows")
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (WINDOW_LOCK,))
    moved = await (
        await conn.execute(
            "UPDATE search_window_progress SET embedded_up_to = %s, "
            "embedder = coalesce(nullif(%s, ''), embedder), embedder_seen = mg_now() "
            "WHERE id = 1 AND model = %s AND generation = %s AND embedded_up_to = %s RETURNING 1",
            (batch.window_ids[-1], worker, batch.model_id, batch.generation, batch.after),
        )
    ).fetchone()
    if moved is None:
        return False
    await conn.execute(
        "INSERT INTO search_window_vectors(window_id, digest, vector) "
        "SELECT v.window_id, v.digest, v.vector FROM unnest(%s::bigint[], %s::text[], %s::bytea[]) "
        "AS v(window_id, digest, vector) JOIN search_windows AS w ON w.id = v.window_id "
        "ON CONFLICT (window_id) DO UPDATE SET digest = excluded.digest, vector = excluded.vector",
        (
            list(batch.window_ids),
            [text_digest(body) for body in batch.bodies],
            [encode_vector(vector) for vector in vectors],
        ),
    )
    return True


async def claim_model(conn: Conn, model_id: str) -> tuple[int, int]:
    """Make ``model_id`` the stored vectors' model (dropping another model's); its generation and
    embedded-up-to mark."""
    row = await (
        await conn.execute(
            "SELECT model, generation, embedded_up_to FROM search_window_progress WHERE id = 1"
        )
    ).fetchone()
    if row is not None and str(row[0]) == model_id:
        return int(row[1]), int(row[2])
    return await forget_vectors(conn, model_id), 0


async def forget_vectors(conn: Conn, model_id: str | None = None) -> int:
    """Drop every vector (a rebuild, or another model); the next batches embed every window again. The new
    generation.

    The progress row is updated (and so locked) before the vectors are deleted: a batch being stored now
    either committed before the DELETE's snapshot (and is deleted) or finds the new generation and stores
    nothing; never a vector left behind from the old generation."""
    row = await (
        await conn.execute(
            "UPDATE search_window_progress SET generation = generation + 1, embedded_up_to = 0, "
            "model = coalesce(%s, model) WHERE id = 1 RETURNING generation",
            (model_id,),
        )
    ).fetchone()
    await conn.execute("DELETE FROM search_window_vectors")
    return int(row[0]) if row is not None else 0


class PgVectorCache:
    """The process's ``VectorMatrix`` of one database schema, new when the model or generation changes."""

    def __init__(self, model_id: str, dim: int) -> None:
        self.model_id = model_id
        self.dim = dim
        self._lock = asyncio.Lock()
        self._matrix: VectorMatrix | None = None

    async def current(self, conn: Conn) -> VectorMatrix | None:
        row = await (
            await conn.execute(
                "SELECT p.model, p.generation, m.value FROM search_window_progress AS p "
                "JOIN meta AS m ON m.key = 'db_uuid' WHERE p.id = 1"
            )
        ).fetchone()
        if row is None or str(row[0]) != self.model_id:
            return None
        identity = f"{row[2]}:{self.model_id}:{row[1]}"
        async with self._lock:
            matrix = self._matrix
            if matrix is None or matrix.identity != identity:
                matrix = self._matrix = VectorMatrix(self.dim, identity)
            while True:
                cursor = await conn.execute(
                    "SELECT v.window_id, w.conversation_id, w.segment_id, v.vector "
                    "FROM search_window_vectors AS v JOIN search_windows AS w ON w.id = v.window_id "
                    "WHERE v.window_id > %s ORDER BY v.window_id LIMIT %s",
                    (matrix.loaded_up_to, _LOAD_BATCH),
                )
                rows = await cursor.fetchall()
                if not rows:
                    return matrix
                vectors = decode_vectors([bytes(r[3]) for r in rows], self.dim)
                matrix.append(
                    [VectorRow(int(r[0]), str(r[1]), str(r[2]), vectors[i]) for i, r in enumerate(rows)],
                    int(rows[-1][0]),
                )


async def windows_of(conn: Conn, messages: Sequence[FoundMessage]) -> dict[int, tuple[WindowRef, ...]]:
    """Per message id, the stored windows holding it (looked up by the segment each message names)."""
    if not messages:
        return {}
    cursor = await conn.execute(
        "SELECT a.id, w.id, w.conversation_id, w.segment_id, w.message_ids "
        "FROM unnest(%s::bigint[], %s::text[]) AS a(id, segment_id) "
        "CROSS JOIN LATERAL (SELECT * FROM search_windows AS s WHERE s.segment_id = a.segment_id "
        "AND s.first_id <= a.id ORDER BY s.first_id DESC LIMIT 2) AS w "
        "WHERE w.last_id >= a.id",
        ([m.id for m in messages], [m.segment_id for m in messages]),
    )
    found: dict[int, list[WindowRef]] = {}
    for r in await cursor.fetchall():
        found.setdefault(int(r[0]), []).append(
            WindowRef(int(r[1]), str(r[2]), str(r[3]), tuple(int(i) for i in r[4]))
        )
    return {message_id: tuple(refs) for message_id, refs in found.items()}


async def nearest_windows(
    conn: Conn,
    cache: PgVectorCache,
    query: Sequence[float],
    conversations: Sequence[str] | None,
    excluded_segment: str | None,
    limit: int,
) -> list[WindowHit]:
    """The windows nearest ``query`` among ``conversations`` (None: all), never ``excluded_segment``'s."""
    matrix = await cache.current(conn)
    if matrix is None:
        return []
    nearest = matrix.nearest(
        np.asarray(query, dtype=np.float32),
        limit,
        conversations=conversations,
        excluded_segment=excluded_segment,
    )
    cursor = await conn.execute(
        "SELECT id, conversation_id, segment_id, message_ids FROM search_windows WHERE id = ANY(%s)",
        ([window_id for window_id, _ in nearest],),
    )
    refs = {
        int(r[0]): WindowRef(int(r[0]), str(r[1]), str(r[2]), tuple(int(i) for i in r[3]))
        for r in await cursor.fetchall()
    }
    return [WindowHit(refs[i], score) for i, score in nearest if i in refs]


async def participants(
    conn: Conn, words: Sequence[str], conversation_ids: Sequence[str] | None, cap: int
) -> dict[str, tuple[str, ...]]:
    """Per word naming a speaker, the conversations (of the given ones; None: any) where they speak."""
    folded = sorted({word.casefold() for word in words if word})
    if not folded:
        return {}
    cursor = await conn.execute(
        "SELECT name, conversation_id FROM search_participants WHERE name = ANY(%s) ORDER BY name", (folded,)
    )
    allowed = None if conversation_ids is None else set(conversation_ids)
    found: dict[str, list[str]] = {}
    for name, conversation_id in await cursor.fetchall():
        if allowed is None or str(conversation_id) in allowed:
            ids = found.setdefault(str(name), [])
            if len(ids) < cap:
                ids.append(str(conversation_id))
    return {name: tuple(ids) for name, ids in found.items()}


async def semantic_state(conn: Conn, model_id: str, *, counted: bool) -> SemanticStatus:
    """Ready when every window carries a vector of ``model_id``; ``counted``: with exact counts."""
    row = await (
        await conn.execute(
            "SELECT p.model, p.embedded_up_to, (SELECT max(id) FROM search_windows) "
            "FROM search_window_progress AS p WHERE p.id = 1"
        )
    ).fetchone()
    newest = int(row[2]) if row is not None and row[2] is not None else 0
    embedded = int(row[1]) if row is not None and str(row[0]) == model_id else 0
    state: SemanticState = "ready" if embedded >= newest else "building"
    if not counted:
        return SemanticStatus(state, newest, embedded, model_id)
    counts = await (
        await conn.execute(
            "SELECT (SELECT count(*) FROM search_windows), (SELECT count(*) FROM search_window_vectors)"
        )
    ).fetchone()
    windows, vectors = (int(counts[0]), int(counts[1])) if counts is not None else (0, 0)
    vectors = vectors if embedded or state == "ready" else 0
    return SemanticStatus(state, windows, min(vectors, windows), model_id)
