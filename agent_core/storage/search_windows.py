"""Search windows: how a segment's turns become ranked units of adjacent turns, and what embeds them.

Invariants (every backend builds windows with ``plan_windows``, so both agree on every window):
- a window is up to ``WINDOW_SIZE`` consecutive *windowable* messages (user and assistant turns with
  text) of ONE segment, starting every ``WINDOW_STRIDE`` turns, so every pair of adjacent turns (a
  question and its answer) lies whole inside some window;
- a window is stored once it is complete (``WINDOW_SIZE`` turns), or, shorter, once its segment has
  ended; a short window of a segment that later receives turns again is replaced, never kept stale;
- windows only cover messages at or below the index's watermark, so a window never skips a turn that
  commits late;
- ``window_text`` (speaker labels, capped turns) is what an ``Embedder`` reads; a window's ``digest``
  is a hash of that text, so a vector is always the vector of the window's current text.
Pure: no I/O, no SQL, no model; backends (``*/storage/{sqlite,postgres}``) carry it out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

WINDOW_SIZE: Final = 3
WINDOW_STRIDE: Final = 2
WINDOWED_ROLES: Final = ("user", "assistant")
# A long turn adds little to a window's meaning past its opening; the embedding cost grows with length.
TURN_CHARS: Final = 280
ASSISTANT_LABEL: Final = "assistant"
USER_LABEL: Final = "user"
_NAME_WORD: Final = re.compile(r"[^\W\d_]{2,}")

Vector = npt.NDArray[np.float32]
SemanticState = Literal["ready", "building", "off", "unavailable"]


def windowable(role: str, content: str | None) -> bool:
    """Whether a message is a turn of the conversation's windows (tool output and empty steps are not)."""
    return role in WINDOWED_ROLES and bool(content and content.strip())


def speaker_label(role: str, author: str | None, segment_person: str | None, display_name: str | None) -> str:
    """Who said a turn, as the window shows it: the assistant, the person's display name, or the author."""
    if role != "user":
        return ASSISTANT_LABEL
    if display_name and (author is None or author == segment_person):
        return display_name
    return author or USER_LABEL


def name_words(label: str) -> tuple[str, ...]:
    """The case-folded words of a speaker label that can name a participant ("Priya", not "p_0001")."""
    if label in (ASSISTANT_LABEL, USER_LABEL):
        return ()
    return tuple(dict.fromkeys(word.casefold() for word in _NAME_WORD.findall(label)))


@dataclass(frozen=True, slots=True)
class Turn:
    """One windowable message as a window holds it."""

    id: int
    speaker: str
    content: str


@dataclass(frozen=True, slots=True)
class NewWindow:
    """A window to store: its place in the segment and its turns (ids ascending)."""

    position: int
    turns: tuple[Turn, ...]

    @property
    def message_ids(self) -> tuple[int, ...]:
        return tuple(turn.id for turn in self.turns)

    @property
    def complete(self) -> bool:
        return len(self.turns) == WINDOW_SIZE

    @property
    def text(self) -> str:
        return window_text(self.turns)

    @property
    def digest(self) -> str:
        return text_digest(self.text)


@dataclass(frozen=True, slots=True)
class StoredTail:
    """The last window a backend stored for a segment (what the next build continues from)."""

    window_id: int
    position: int
    message_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """What one build does to a segment's windows: drop a short window that is no longer right, store new
    ones; ``open_tail``: some turns are in no stored window yet (the segment is live), so the segment must
    be looked at again when it ends."""

    drop_window_id: int | None
    windows: tuple[NewWindow, ...]
    open_tail: bool


def plan_windows(tail: StoredTail | None, turns: Sequence[Turn], *, ended: bool) -> WindowPlan:
    """The windows of a segment given its last stored window and the turns from that window's start on.

    ``turns``: the segment's windowable turns, ascending, starting at the first turn of ``tail`` (or the
    segment's first turn when ``tail`` is None), up to the watermark. ``ended``: the segment has ended, so a
    short last window is stored rather than left open.
    """
    short_tail = tail is not None and len(tail.message_ids) < WINDOW_SIZE
    if tail is None or short_tail:
        # No window yet, or a short one stored when the segment had ended: (re-)form from its start.
        position, start = (tail.position if tail is not None else 0), 0
    else:
        # The next window starts at the tail's last turn (windows overlap by one turn).
        position = tail.position + 1
        last = tail.message_ids[-1]
        start = next((i for i, turn in enumerate(turns) if turn.id == last), len(turns))
    windows: list[NewWindow] = []
    open_tail = False
    index = start
    while index < len(turns):
        chunk = tuple(turns[index : index + WINDOW_SIZE])
        if len(chunk) == WINDOW_SIZE:
            windows.append(NewWindow(position, chunk))
            position += 1
            index += WINDOW_STRIDE
            continue
        # A chunk's first turn is the previous window's last one, except at the very start.
        if len(chunk) > (1 if index > 0 else 0):
            if ended:
                windows.append(NewWindow(position, chunk))
            else:
                open_tail = True
        break
    drop = None
    if short_tail:
        assert tail is not None
        if windows and windows[0].message_ids == tail.message_ids:
            windows.pop(0)
        elif not (open_tail and not windows and tuple(t.id for t in turns) == tail.message_ids):
            drop = tail.window_id
    return WindowPlan(drop, tuple(windows), open_tail)


def window_text(turns: Sequence[Turn]) -> str:
    """``speaker: text`` per turn, each turn cut to ``TURN_CHARS`` characters, whitespace collapsed."""
    lines = []
    for turn in turns:
        flat = " ".join(turn.content.split())
        if len(flat) > TURN_CHARS:
            flat = flat[:TURN_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"{turn.speaker}: {flat}")
    return "\n".join(lines)


def text_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).hexdigest()


class Embedder(Protocol):
    """Turns text into unit-length vectors of one model; safe to call from several threads at once.

    ``model_id`` names the model and its version: vectors of different models are never compared.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def similarity_floor(self) -> float:
        """The cosine below which a window is unrelated to a query for this model (measured per model)."""
        ...

    def embed_query(self, text: str) -> Vector:
        """One search query as a ``(dim,)`` float32 unit vector."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Window texts as an ``(n, dim)`` float32 array of unit vectors."""
        ...


@dataclass(frozen=True, slots=True)
class SemanticStatus:
    """How far the semantic index is: ``ready`` (every window embedded), ``building``, ``off`` (no model
    configured) or ``unavailable`` (the model cannot load here); ``detail`` says why."""

    state: SemanticState
    windows: int = 0
    embedded: int = 0
    model_id: str | None = None
    detail: str = ""

    @property
    def pending(self) -> int:
        return max(0, self.windows - self.embedded)


def encode_vector(vector: npt.NDArray[np.float32]) -> bytes:
    """A vector as stored: little-endian float16 (half the bytes; similarity changes by < 1e-3)."""
    return np.asarray(vector, dtype="<f2").tobytes()


def decode_vectors(blobs: Sequence[bytes], dim: int) -> npt.NDArray[np.float32]:
    """Stored vectors back as an ``(n, dim)`` float32 array (a blob of the wrong size is a zero row)."""
    out = np.zeros((len(blobs), dim), dtype=np.float32)
    for row, blob in enumerate(blobs):
        if len(blob) == dim * 2:
            out[row] = np.frombuffer(blob, dtype="<f2")
    return out
