"""Rendering a document into platform-dialect chunks that each fit the platform's length limit.

Invariants: every chunk measures at most ``limit``; every chunk is well-formed on its own (entities and
code blocks that must be split are closed at the end of one chunk and reopened at the start of the next);
a block that fits in one chunk is never split; oversized blocks split at the best boundary available:
line, then word, then a hard cut, preferring boundaries outside entities.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from adapters.render.document import Block, Style

Measure = Callable[[str], int]

# Boundary quality before an atom: the chunker breaks at the best one available.
_NEVER, _HARD, _WORD_IN_ENTITY, _WORD, _LINE_IN_ENTITY, _LINE, _BLOCK = range(7)
_PIECES = re.compile(r"\n|[^\S\n]+|\S+[^\S\n]*")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")


class Dialect(Protocol):
    """How one platform writes styled text."""

    def escape(self, text: str, styles: tuple[Style, ...]) -> str: ...

    def open(self, style: Style) -> str: ...

    def close(self, style: Style) -> str: ...


@dataclass(frozen=True)
class _Atom:
    text: str
    styles: tuple[Style, ...]
    quality: int
    separator: str = ""


def _common(a: tuple[Style, ...], b: tuple[Style, ...]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def _split_hard(piece: str, size: int) -> list[str]:
    return [piece[i : i + size] for i in range(0, len(piece), size)] or [piece]


def _block_atoms(block: Block, hard_max: int) -> list[_Atom]:
    atoms: list[_Atom] = []
    pattern = _LINES if block.is_preformatted else _PIECES
    previous = ""
    previous_styles: tuple[Style, ...] = ()
    for run in block.runs:
        for piece in pattern.findall(run.text):
            for index, part in enumerate(_split_hard(piece, hard_max)):
                if not atoms:
                    quality = _BLOCK
                elif index > 0:
                    quality = _HARD
                elif previous.endswith("\n") or previous[-1:].isspace() or part[:1].isspace():
                    inside = _common(previous_styles, run.styles) > 0
                    if previous.endswith("\n"):
                        quality = _LINE_IN_ENTITY if inside else _LINE
                    else:
                        quality = _WORD_IN_ENTITY if inside else _WORD
                else:
                    quality = _HARD
                atoms.append(_Atom(part, run.styles, quality))
                previous, previous_styles = part, run.styles
    return atoms


def _leading_trimmed(atom: _Atom) -> str:
    # Indentation is meaningful in code, so a chunk starting inside a code block keeps it.
    if atom.styles[:1] and atom.styles[0].kind == "pre":
        return atom.text.lstrip("\n")
    return atom.text.lstrip()


class _Renderer:
    """Measures and writes atoms in a dialect, tracking which styles are open."""

    def __init__(self, dialect: Dialect, measure: Measure) -> None:
        self.dialect = dialect
        self.measure = measure
        self._closing_lengths: dict[tuple[Style, ...], int] = {}

    def closing_length(self, state: tuple[Style, ...]) -> int:
        length = self._closing_lengths.get(state)
        if length is None:
            length = self._closing_lengths[state] = self.measure(self.closing(state))
        return length

    def step(
        self, state: tuple[Style, ...], atom: _Atom, first: bool, text: str
    ) -> tuple[str, tuple[Style, ...]]:
        """The markup that moves from ``state`` to ``atom`` and writes ``text``; the new state."""
        out: list[str] = []
        keep = _common(state, atom.styles)
        if atom.separator and not first:
            keep = 0
        out += [self.dialect.close(style) for style in reversed(state[keep:])]
        if atom.separator and not first:
            out.append(atom.separator)
        out += [self.dialect.open(style) for style in atom.styles[keep:]]
        out.append(self.dialect.escape(text, atom.styles))
        return "".join(out), atom.styles

    def closing(self, state: tuple[Style, ...]) -> str:
        return "".join(self.dialect.close(style) for style in reversed(state))

    def write(self, atoms: Sequence[_Atom]) -> str:
        out: list[str] = []
        state: tuple[Style, ...] = ()
        last = len(atoms) - 1
        for index, atom in enumerate(atoms):
            text = _leading_trimmed(atom) if index == 0 else atom.text
            if index == last:
                text = text.rstrip()
            piece, state = self.step(state, atom, index == 0, text)
            out.append(piece)
        out.append(self.closing(state))
        return "".join(out)

    def standalone_length(self, atoms: Sequence[_Atom]) -> int:
        return self.measure(self.write(atoms)) if atoms else 0


def _atoms(blocks: Sequence[Block], renderer: _Renderer, limit: int, hard_max: int) -> list[_Atom]:
    atoms: list[_Atom] = []
    for block in blocks:
        own = _block_atoms(block, hard_max)
        if not own:
            continue
        if renderer.standalone_length(own) <= limit:
            # A block that fits in one chunk is never split: its inner boundaries are not candidates.
            own = [own[0]] + [replace(atom, quality=_NEVER) for atom in own[1:]]
        own[0] = replace(own[0], quality=_BLOCK, separator=block.separator if atoms else "")
        atoms += own
    return atoms


def _is_blank(atom: _Atom) -> bool:
    return not atom.text.strip()


def chunk_blocks(blocks: Sequence[Block], dialect: Dialect, limit: int, measure: Measure) -> list[str]:
    """Render ``blocks`` in ``dialect`` as chunks of at most ``limit`` units each (``measure``)."""
    if limit < 64:
        raise ValueError("a chunk limit below 64 units cannot hold a reopened entity")
    renderer = _Renderer(dialect, measure)
    hard_max = max(1, limit // 16)
    atoms = _atoms(blocks, renderer, limit, hard_max)
    chunks: list[str] = []
    start = 0
    while start < len(atoms):
        while start < len(atoms) and _is_blank(atoms[start]):
            start += 1
        if start == len(atoms):
            break
        end, fills = _fill(atoms, start, renderer, limit)
        if end == start:
            # Even alone this atom's entities do not fit (e.g. a giant link target): send it unstyled.
            atoms[start] = replace(atoms[start], styles=())
            continue
        cut = end if end == len(atoms) else _best_cut(atoms, start, end, fills, limit)
        text = renderer.write(_trim(atoms[start:cut]))
        if text:
            chunks.append(text)
        start = cut
    return chunks


def _trim(atoms: list[_Atom]) -> list[_Atom]:
    while atoms and _is_blank(atoms[-1]):
        atoms = atoms[:-1]
    return atoms


def _fill(atoms: list[_Atom], start: int, renderer: _Renderer, limit: int) -> tuple[int, dict[int, int]]:
    """How many atoms from ``start`` fit, and the closed length of the chunk ending before each."""
    state: tuple[Style, ...] = ()
    length = 0
    fills: dict[int, int] = {}
    index = start
    while index < len(atoms):
        atom = atoms[index]
        text = _leading_trimmed(atom) if index == start else atom.text
        piece, new_state = renderer.step(state, atom, index == start, text)
        cost = renderer.measure(piece)
        if length + cost + renderer.closing_length(new_state) > limit:
            break
        length += cost
        state = new_state
        index += 1
        fills[index] = length + renderer.closing_length(state)
    return index, fills


def _best_cut(atoms: list[_Atom], start: int, end: int, fills: dict[int, int], limit: int) -> int:
    """The best boundary in ``(start, end]``, preferring a full-enough chunk, then quality, then length."""
    candidates = [k for k in range(start + 1, end + 1) if atoms[k].quality > _NEVER]
    if not candidates:
        return end
    full = [k for k in candidates if fills.get(k, 0) >= limit // 2]
    pool = full if full and max(atoms[k].quality for k in full) >= _LINE_IN_ENTITY else candidates
    return max(pool, key=lambda k: (atoms[k].quality, k))
