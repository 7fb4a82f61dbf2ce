"""``mnemogate migrate --to postgres [DSN] [--schema NAME] [--replace]``: move a SQLite home into PostgreSQL.

The home (``--home``) must not be in use: its state.db, the local provider's fact file, its memory files and
skills are read while no process has it open, and left exactly as they were. The PostgreSQL schema (the
configured ``storage.postgres`` with DSN and schema as given here) is created and migrated first; the copy is
one transaction, verified before its commit (see ``gateway.storage.home_move``). Running it again finds the
rows already there and copies nothing; a schema holding other data is refused unless ``--replace``. The
output says what was copied, table by table, and the configuration to switch the home to PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agent_core.storage.postgres.settings import PostgresSettings, redacted_dsn
from gateway.cli.context import CommandContext
from gateway.storage.home_move import MoveReport, move_home

if TYPE_CHECKING:  # the backends are imported when the command runs, so other commands never load a driver
    from gateway.storage.sqlite.export_rows import SqliteHomeRows

TARGETS = ("postgres",)
DSN_VARIABLE = "MNEMOGATE_STORAGE__POSTGRES__DSN"


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "migrate",
        parents=[common],
        help="copy a SQLite home (stopped) into PostgreSQL: conversations, queues, memory, skills, facts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--to", choices=TARGETS, required=True, help="the backend to move to")
    parser.add_argument(
        "dsn",
        nargs="?",
        metavar="DSN",
        help=f"postgresql://… (default: storage.postgres.dsn, {DSN_VARIABLE})",
    )
    parser.add_argument(
        "--schema", metavar="NAME", help="PostgreSQL schema (default: storage.postgres.schema)"
    )
    parser.add_argument(
        "--replace", action="store_true", help="empty a schema that holds other data first (same transaction)"
    )
    parser.set_defaults(handler=run_migrate)


def run_migrate(context: CommandContext) -> int:
    from gateway.storage.sqlite.export_rows import open_home_rows

    target = _target_settings(context)
    if target is None:
        return 2
    facts_file = context.home.root / context.settings.memory.provider.local.db_path
    with open_home_rows(context.home.root, context.settings.storage.sqlite, facts_file=facts_file) as source:
        report = asyncio.run(_move(source, target, replace=context.args.replace))
        files = source.files()
    _print_report(report, target, files)
    return 0


async def _move(source: SqliteHomeRows, target: PostgresSettings, *, replace: bool) -> MoveReport:
    from gateway.storage.postgres.backend import open_postgres_storage
    from gateway.storage.postgres.copy_in import PgHomeTarget

    async with open_postgres_storage(target) as storage:
        return await move_home(source, PgHomeTarget(storage.db), replace=replace)


def _target_settings(context: CommandContext) -> PostgresSettings | None:
    """The configured ``storage.postgres`` with the DSN and schema given here; None (after saying why)."""
    args = context.args
    values = context.settings.storage.postgres.model_dump()
    if args.dsn:
        values["dsn"] = args.dsn
    if args.schema:
        values["schema_name"] = args.schema
    try:
        settings = PostgresSettings.model_validate(values)
        _ = settings.conninfo  # ValueError when no DSN is set anywhere
    except ValidationError as exc:
        problems = "; ".join(str(error["msg"]) for error in exc.errors())
        print(f"mnemogate: error: {problems}", file=sys.stderr)
        return None
    except ValueError:
        print(
            f"mnemogate: error: no PostgreSQL DSN: give one (mnemogate migrate --to postgres DSN) or set "
            f"storage.postgres.dsn / {DSN_VARIABLE}",
            file=sys.stderr,
        )
        return None
    return settings


def _print_report(report: MoveReport, target: PostgresSettings, files: tuple[str, ...]) -> None:
    print(f"migrate {report.source} (SQLite) -> {report.target}")
    if report.outcome == "already migrated":
        print(
            f"already migrated, nothing copied: the schema holds exactly this home's {_rows(report.rows)} "
            f"in {len(report.tables)} tables, its memory documents and skills"
        )
    else:
        for emptied in report.emptied:
            print(f"  emptied first (--replace): {emptied.table} ({_rows(emptied.rows)})")
        width = max((len(t.table) for t in report.tables), default=0)
        for table in report.tables:
            print(f"  {table.table:<{width}}  {_rows(table.rows):>14} copied")
        print(
            f"copied {_rows(report.rows)} in one transaction ({report.seconds:.2f} s), verified before the "
            "commit: every table's row count and content digest equal the home's"
        )
    verb = "already there" if report.outcome == "already migrated" else "copied"
    print(f"memory documents {verb}: {len(report.memory)}")
    for document in report.memory:
        note = f" (stored text {document.problem}; copied its entries)" if document.problem else ""
        print(f"  {document.key}: {document.entries} {'entry' if document.entries == 1 else 'entries'}{note}")
    print(
        f"skills {verb}: {len(report.skills)}{' (' + ', '.join(report.skills) + ')' if report.skills else ''}"
    )
    if report.client_key:
        print("web chat key (client_ids.key) copied: browsers and API clients keep their conversations")
    for note in report.notes:
        print(f"note: {note}")
    print(f"the SQLite files were left untouched ({', '.join(files)} in {report.source})")
    print("to run this home on PostgreSQL, set in config.yaml:")
    print("  storage:\n    backend: postgres")
    if target.schema_name != "public":
        print(f"    postgres:\n      schema: {target.schema_name}")
    print(
        f"and the DSN in the environment: {DSN_VARIABLE}='{redacted_dsn(target.conninfo)}' (or DATABASE_URL)"
    )


def _rows(n: int) -> str:
    return f"{n:,} row" if n == 1 else f"{n:,} rows"
