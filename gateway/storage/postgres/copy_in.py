"""A moved home's rows into one PostgreSQL schema (``gateway.storage.home_move.HomeTarget``): COPY inside one
transaction, identity sequences moved past the copied ids, and every table proven equal before the commit.

Invariants: everything happens in ONE transaction (all or nothing), which first locks every table it reads
or writes (``EXCLUSIVE``: running hosts may still read, nobody writes; a host holding a table longer than
``LOCK_TIMEOUT`` makes the move fail instead of wait), so the emptiness check, the copy and the verification
see one unchanging schema; rows go in with COPY, explicit ids included (identity columns take COPY's
values), generated columns (search vectors) are never written and fill themselves; afterwards each identity
sequence continues after its table's largest id; before the commit, every table is read back in key order
(text keys in code-point order, ``COLLATE "C"``, as SQLite sorts them) and must give the source's count and
digest, and the memory documents and skills exactly the source's texts — else the transaction rolls back.
The home's client key becomes the schema's (so every browser keeps its account); a schema already holding
exactly these rows is left untouched (it gains the key only if it has none); any other data is refused unless
``replace``, which empties every table of the schema (but ``meta`` and the version tables) first, in the
same transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from psycopg import errors, sql

from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.home_move import (
    Arrival,
    HomeMoveError,
    MovePlan,
    MoveVerificationError,
    RowDigest,
    TableCount,
    TableDigest,
    TableShape,
    TargetHoldsDataError,
)
from gateway.storage.postgres.client_keys import keep_client_key, store_client_key

LOCK_TIMEOUT = "10s"
KEPT = frozenset({"meta", "schema_version", "gateway_schema_version"})
"""Tables the target's own migrations own: never emptied, copied or compared."""
DOCUMENT_TABLES = ("memory_documents", "skills", "skills_deleted")
_TEXT_TYPES = frozenset({"text", "character varying", "character"})
_DIGEST_BATCH = 2_000

_COLUMNS = """SELECT c.table_name, c.column_name, c.data_type, c.is_generated = 'ALWAYS',
        c.is_identity = 'YES', c.is_nullable = 'YES', c.column_default IS NOT NULL
    FROM information_schema.columns c JOIN information_schema.tables t
        ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
    WHERE c.table_schema = current_schema() ORDER BY c.table_name, c.ordinal_position"""
_INSERT_DOCUMENT = """INSERT INTO memory_documents(location, content, version, updated_at)
    VALUES (%s, %s, 1, mg_now())"""
# pg_get_serial_sequence wants the table's name as SQL text: this schema's own, quoted.
_CONTINUE_IDENTITY = """SELECT setval(
    pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident({}), {}),
    coalesce(max({}), 0) + 1, false) FROM {}"""
_INSERT_SKILL = "INSERT INTO skills(name, content, version, updated_at) VALUES (%s, %s, 1, mg_now())"


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a target table as the move needs to know it."""

    name: str
    data_type: str
    generated: bool
    identity: bool
    optional: bool
    """Whether a row may leave it out (nullable, a default, or an identity)."""


Tables = Mapping[str, tuple[Column, ...]]


class PgHomeTarget:
    """The schema ``db`` opens (created and migrated by ``open_postgres_storage``) as a move's target."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    @property
    def where(self) -> str:
        return self._db.where

    async def receive(self, plan: MovePlan, *, replace: bool) -> Arrival:
        tables = await self._db.run_read(_read_tables)
        _check_shapes(plan.shapes, tables, self.where)
        return await self._db.run_write(
            partial(_receive, plan=plan, tables=tables, replace=replace, where=self.where)
        )


async def _read_tables(conn: Conn) -> dict[str, tuple[Column, ...]]:
    found: dict[str, list[Column]] = {}
    for table, name, data_type, generated, identity, nullable, has_default in await (
        await conn.execute(_COLUMNS)
    ).fetchall():
        column = Column(
            str(name), str(data_type), bool(generated), bool(identity), nullable or has_default or identity
        )
        found.setdefault(str(table), []).append(column)
    return {table: tuple(columns) for table, columns in found.items()}


def _check_shapes(shapes: Sequence[TableShape], tables: Tables, where: str) -> None:
    """HomeMoveError (before anything is locked) when a source table or column has no place in the target,
    or a target column the source cannot fill has neither a default nor NULL allowed."""
    problems: list[str] = []
    for shape in shapes:
        columns = {c.name: c for c in tables.get(shape.name, ())}
        if not columns:
            problems.append(f"table {shape.name} is missing")
            continue
        for name in shape.columns:
            if name not in columns:
                problems.append(f"{shape.name}.{name} is missing")
            elif columns[name].generated:
                problems.append(f"{shape.name}.{name} is generated here")
        left_out = [c.name for c in columns.values() if c.name not in shape.columns and not c.generated]
        problems += [f"{shape.name}.{n} has no value to copy" for n in left_out if not columns[n].optional]
    problems += [f"table {t} is missing" for t in DOCUMENT_TABLES if t not in tables]
    if problems:
        raise HomeMoveError(f"{where} does not fit this home: {'; '.join(problems)}")


async def _receive(conn: Conn, *, plan: MovePlan, tables: Tables, replace: bool, where: str) -> Arrival:
    await conn.execute("SET LOCAL statement_timeout = 0")  # a big home's COPY may take minutes
    await conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(LOCK_TIMEOUT)))
    known = (*(shape.name for shape in plan.shapes), *DOCUMENT_TABLES)
    await _lock(conn, known, where)
    held = tuple(count for count in await _counts(conn, known) if count.rows)
    emptied: tuple[TableCount, ...] = ()
    if held:
        if await _holds_exactly(conn, plan, tables):
            if plan.client_key is not None:
                await keep_client_key(conn, plan.client_key)
            return Arrival("already migrated", plan.digests)
        if not replace:
            raise TargetHoldsDataError(where, held)
        await _empty(conn, tables)
        emptied = held
    for shape in plan.shapes:
        await _copy(conn, shape, plan.source.insert_rows(shape))
    await _continue_identities(conn, plan.shapes, tables)
    await _insert_documents(conn, plan)
    if plan.client_key is not None:
        await store_client_key(conn, plan.client_key)
    arrived = await _verify(conn, plan, tables)
    # The planner's statistics describe the copied rows from the first search on (not after autovacuum).
    names = sql.SQL(", ").join(sql.Identifier(shape.name) for shape in plan.shapes)
    await conn.execute(sql.SQL("ANALYZE {}").format(names))
    return Arrival("copied", arrived, emptied)


async def _lock(conn: Conn, names: Iterable[str], where: str) -> None:
    statement = sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
        sql.SQL(", ").join(sql.Identifier(name) for name in names)
    )
    try:
        await conn.execute(statement)
    except errors.LockNotAvailable as exc:
        raise HomeMoveError(
            f"{where} is in use: its tables stayed locked for {LOCK_TIMEOUT}; stop the mnemogate hosts using "
            "this schema first"
        ) from exc


async def _counts(conn: Conn, names: Iterable[str]) -> tuple[TableCount, ...]:
    counts = []
    for name in names:
        statement = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(name))
        row = await (await conn.execute(statement)).fetchone()
        counts.append(TableCount(name, int(row[0]) if row is not None else 0))
    return tuple(counts)


async def _holds_exactly(conn: Conn, plan: MovePlan, tables: Tables) -> bool:
    """Whether the schema already holds exactly the plan's rows, documents and skills (a finished move)."""
    for shape in plan.shapes:
        if await _digest(conn, shape, tables) != plan.digest_of(shape.name):
            return False
    deleted = await _counts(conn, ("skills_deleted",))
    documents, skills = await _documents(conn)
    return deleted[0].rows == 0 and documents == plan.memory and skills == plan.skills


async def _empty(conn: Conn, tables: Tables) -> None:
    emptied = sorted(name for name in tables if name not in KEPT)
    await conn.execute(
        sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(
            sql.SQL(", ").join(sql.Identifier(name) for name in emptied)
        )
    )


async def _copy(conn: Conn, shape: TableShape, rows: Iterable[tuple[object, ...]]) -> None:
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(shape.name), sql.SQL(", ").join(sql.Identifier(c) for c in shape.columns)
    )
    try:
        async with conn.cursor().copy(statement) as copy:
            for row in rows:
                await copy.write_row(row)
    except errors.DataError as exc:
        raise HomeMoveError(f"a row of {shape.name} does not fit PostgreSQL: {_first_line(exc)}") from exc
    except errors.IntegrityError as exc:
        raise HomeMoveError(f"the rows of {shape.name} break a constraint: {_first_line(exc)}") from exc


async def _continue_identities(conn: Conn, shapes: Sequence[TableShape], tables: Tables) -> None:
    """Each copied table's identity sequence continues after its largest id (at 1 when it is empty)."""
    for shape in shapes:
        for column in tables[shape.name]:
            if not column.identity:
                continue
            statement = sql.SQL(_CONTINUE_IDENTITY).format(
                sql.Literal(shape.name),
                sql.Literal(column.name),
                sql.Identifier(column.name),
                sql.Identifier(shape.name),
            )
            await conn.execute(statement)


async def _insert_documents(conn: Conn, plan: MovePlan) -> None:
    async with conn.cursor() as cursor:
        if plan.memory:
            await cursor.executemany(_INSERT_DOCUMENT, plan.memory)
        if plan.skills:
            await cursor.executemany(_INSERT_SKILL, plan.skills)


async def _verify(conn: Conn, plan: MovePlan, tables: Tables) -> tuple[TableDigest, ...]:
    arrived = tuple([await _digest(conn, shape, tables) for shape in plan.shapes])
    problems = [
        f"{got.table}: {got.rows:,} rows (digest {got.digest[:12]}) where the home has "
        f"{want.rows:,} (digest {want.digest[:12]})"
        for got, want in zip(arrived, plan.digests, strict=True)
        if got != want
    ]
    documents, skills = await _documents(conn)
    if documents != plan.memory:
        problems.append("the memory documents differ from the home's")
    if skills != plan.skills:
        problems.append("the skills differ from the home's")
    if problems:
        raise MoveVerificationError(f"verification failed, nothing was kept: {'; '.join(problems)}")
    return arrived


async def _digest(conn: Conn, shape: TableShape, tables: Tables) -> TableDigest:
    """The table's rows (``shape``'s columns) in key order, digested as the source's were."""
    types = {c.name: c.data_type for c in tables[shape.name]}
    order = sql.SQL(", ").join(
        sql.SQL('{} COLLATE "C"').format(sql.Identifier(k)) if types[k] in _TEXT_TYPES else sql.Identifier(k)
        for k in shape.key
    )
    statement = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
        sql.SQL(", ").join(sql.Identifier(c) for c in shape.columns), sql.Identifier(shape.name), order
    )
    digest = RowDigest()
    async with conn.cursor(name=f"mg_move_{shape.name}") as cursor:
        cursor.itersize = _DIGEST_BATCH
        await cursor.execute(statement)
        async for row in cursor:
            digest.add(row)
    return digest.result(shape.name)


async def _documents(conn: Conn) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(location, content) of every memory document and (name, content) of every skill, sorted."""
    memory = await (
        await conn.execute('SELECT location, content FROM memory_documents ORDER BY location COLLATE "C"')
    ).fetchall()
    skills = await (
        await conn.execute('SELECT name, content FROM skills ORDER BY name COLLATE "C"')
    ).fetchall()
    return (
        tuple((str(key), str(text)) for key, text in memory),
        tuple((str(name), str(text)) for name, text in skills),
    )


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
