"""Moving a home's state from one backend to another (``mnemogate migrate``): what the source holds,
digested, handed to a target that copies it in one transaction and proves it arrived.

Invariants: the source is read while its home is held exclusively (no process may change it meanwhile) and
is never written; the target copies everything or nothing (one transaction) and, before committing,
proves every table holds exactly the source's rows — the same count and the same ``digest`` over the rows
in key order — and every memory document and skill holds exactly the source's text; a target that already
holds exactly these rows is left alone ("already migrated"), and one that holds anything else is refused
(``TargetHoldsDataError``, naming its tables and counts) unless the caller asked to replace it. Nothing here
names an engine or speaks SQL: rows arrive in the target's naming (its table and column names), as plain
Python values, and the canonical row form below is the one both sides digest.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from agent_core.memory.entries import serialise_entries
from agent_core.skills.errors import SkillError
from agent_core.storage.documents import MemoryDocuments, SkillTexts
from agent_core.storage.errors import StateError

Row = tuple[object, ...]
Outcome = Literal["copied", "already migrated"]


class HomeMoveError(StateError):
    """The move cannot be done (or was rolled back); the target was left as it was."""


class TargetHoldsDataError(HomeMoveError):
    """The target holds rows that are not exactly the source's (and replacing them was not asked for)."""

    def __init__(self, where: str, tables: tuple[TableCount, ...]) -> None:
        self.where = where
        self.tables = tables
        held = ", ".join(f"{t.table} ({t.rows:,} {_rows(t.rows)})" for t in tables)
        super().__init__(
            f"{where} already holds other data: {held}; pass --replace to empty it first, "
            "or choose another --schema"
        )


class MoveVerificationError(HomeMoveError):
    """After copying, the target did not hold exactly the source's rows; the transaction was rolled back."""


@dataclass(frozen=True, slots=True)
class TableShape:
    """One table as the target names it: its columns in order and the key columns its rows sort by."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TableCount:
    table: str
    rows: int


@dataclass(frozen=True, slots=True)
class TableDigest:
    """How many rows a table holds and the digest of their canonical form in key order."""

    table: str
    rows: int
    digest: str


@dataclass(frozen=True, slots=True)
class DocumentMove:
    """One memory document as copied: its key, how many entries, and why its stored text was not canonical
    (it is copied as the canonical text of its entries, which is what a read of it returned)."""

    key: str
    entries: int
    problem: str | None


class RowSource(Protocol):
    """A source's tables, in the target's naming, each readable as often as needed (the home is held)."""

    def shapes(self) -> tuple[TableShape, ...]:
        """Every table to copy, in an order where a table comes after the tables it references."""
        ...

    def rows(self, shape: TableShape) -> Iterator[Row]:
        """The table's rows in key order (what the digest covers)."""
        ...

    def insert_rows(self, shape: TableShape) -> Iterator[Row]:
        """The table's rows in an order where a row comes after the rows of the same table it references."""
        ...


class HomeSource(RowSource, Protocol):
    """An opened, exclusively held home: its tables, its curated documents, and what was left out."""

    @property
    def where(self) -> str: ...

    @property
    def documents(self) -> MemoryDocuments: ...

    @property
    def skills(self) -> SkillTexts: ...

    def notes(self) -> tuple[str, ...]:
        """Things the source holds that are not copied, and why (one line each)."""
        ...

    def client_key(self) -> bytes | None:
        """The key the home hashes web chat cookies and API tokens with (None: it has none yet)."""
        ...


@dataclass(frozen=True, slots=True)
class MovePlan:
    """Everything the target must end up holding, with the digests that prove it did."""

    source: RowSource
    shapes: tuple[TableShape, ...]
    digests: tuple[TableDigest, ...]
    memory: tuple[tuple[str, str], ...]
    """(key, canonical text) of every memory document, sorted by key."""
    skills: tuple[tuple[str, str], ...]
    """(name, SKILL.md text) of every skill, sorted by name."""
    client_key: bytes | None = None
    """The home's client key: the target keeps it, so browsers and API clients keep their accounts."""

    def digest_of(self, table: str) -> TableDigest:
        return next(d for d in self.digests if d.table == table)


@dataclass(frozen=True, slots=True)
class Arrival:
    """What the target did: copied (after emptying ``emptied``), or found it all already there."""

    outcome: Outcome
    tables: tuple[TableDigest, ...]
    emptied: tuple[TableCount, ...] = ()


class HomeTarget(Protocol):
    @property
    def where(self) -> str: ...

    async def receive(self, plan: MovePlan, *, replace: bool) -> Arrival:
        """One transaction: copy the plan's rows and documents and verify them (see the module docstring)."""
        ...


@dataclass(frozen=True, slots=True)
class MoveReport:
    """What one ``move_home`` did, for the operator."""

    source: str
    target: str
    outcome: Outcome
    tables: tuple[TableDigest, ...]
    memory: tuple[DocumentMove, ...]
    skills: tuple[str, ...]
    notes: tuple[str, ...]
    emptied: tuple[TableCount, ...]
    seconds: float
    client_key: bool = False
    """Whether the home had a client key (the target now hashes cookies and tokens with it)."""

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)


class RowDigest:
    """A digest over rows in their canonical form: one JSON array per row (floats as ``repr``, text as is,
    None as null, booleans as true/false; anything else tagged with its type), one line each, SHA-256."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.rows = 0

    def add(self, row: Iterable[object]) -> None:
        line = json.dumps(list(row), ensure_ascii=False, separators=(",", ":"), default=_tagged)
        self._hash.update(line.encode("utf-8", errors="surrogatepass") + b"\n")
        self.rows += 1

    def result(self, table: str) -> TableDigest:
        return TableDigest(table, self.rows, self._hash.hexdigest())


def digest_rows(table: str, rows: Iterable[Row]) -> TableDigest:
    digest = RowDigest()
    for row in rows:
        digest.add(row)
    return digest.result(table)


def plan_move(source: HomeSource) -> tuple[MovePlan, tuple[DocumentMove, ...], tuple[str, ...]]:
    """The plan of ``source`` (every table digested, documents and skills read through their ports), what
    its memory documents hold, and the notes on what is not copied."""
    shapes = source.shapes()
    digests = tuple(digest_rows(shape.name, source.rows(shape)) for shape in shapes)
    documents: list[DocumentMove] = []
    memory: list[tuple[str, str]] = []
    for key in source.documents.list_keys():
        contents = source.documents.read(key)
        documents.append(DocumentMove(key, len(contents.entries), contents.problem))
        memory.append((key, serialise_entries(contents.entries)))
    skills, skipped = _skill_texts(source.skills)
    plan = MovePlan(
        source, shapes, digests, tuple(sorted(memory)), tuple(sorted(skills)), client_key=source.client_key()
    )
    return plan, tuple(documents), (*source.notes(), *skipped)


async def move_home(source: HomeSource, target: HomeTarget, *, replace: bool = False) -> MoveReport:
    """Copy ``source`` into ``target`` and verify it (or find it already there); see the module docstring.

    The source is read on the event loop's thread (its connections belong to it): the move runs alone in
    its command, so there is nothing else to keep responsive.
    """
    started = time.monotonic()
    plan, documents, notes = plan_move(source)
    arrival = await target.receive(plan, replace=replace)
    return MoveReport(
        source=source.where,
        target=target.where,
        outcome=arrival.outcome,
        tables=arrival.tables,
        memory=documents,
        skills=tuple(name for name, _ in plan.skills),
        notes=notes,
        emptied=arrival.emptied,
        seconds=time.monotonic() - started,
        client_key=plan.client_key is not None,
    )


def _skill_texts(skills: SkillTexts) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    texts: list[tuple[str, str]] = []
    skipped: list[str] = []
    for name in skills.names():
        try:
            text = skills.read(name)
        except SkillError as exc:  # an invalid name or an unreadable SKILL.md: the skill store skips it too
            skipped.append(f"skill {name!r} not copied: {exc}")
            continue
        if text is None:
            skipped.append(f"skill folder {name!r} not copied: it holds no SKILL.md")
            continue
        texts.append((name, text))
    return tuple(texts), tuple(skipped)


def _tagged(value: object) -> object:
    """A value JSON has no form for, as its type and ``repr`` (bytes, decimals …), so types never collide."""
    return {"$type": type(value).__name__, "repr": repr(value)}


def _rows(n: int) -> str:
    return "row" if n == 1 else "rows"
