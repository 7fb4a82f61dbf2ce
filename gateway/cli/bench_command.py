"""``mnemogate bench …``: benchmarks that print one JSON object; never part of the test run."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gateway.cli.context import CommandContext


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

    store = kinds.add_parser("store", parents=[common, output], help="state.db append throughput")
    store.add_argument("--processes", type=_positive, default=8)
    store.add_argument("--messages", type=_positive, default=1000, help="messages per process")
    store.add_argument("--preload", type=_non_negative, default=0, help="messages already in the db")
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

    search = kinds.add_parser("search", parents=[common, output], help="import rate and search latency")
    search.add_argument("--messages", type=_positive, default=100_000)
    search.add_argument("--person", action="store_true", help="scope queries to one person, as the tool does")
    search.set_defaults(handler=run_search)

    gateway = kinds.add_parser("gateway", parents=[common, output], help="gateway overhead per turn")
    gateway.add_argument("--conversations", type=_positive, default=1000)
    gateway.add_argument("--messages", type=_positive, default=5, help="messages per conversation")
    gateway.add_argument("--workers", type=_positive, default=2, help="worker processes")
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


def run_store(context: CommandContext) -> int:
    from bench import store

    args = context.args
    return _emit(args.dir, lambda home: store.run(home, args.processes, args.messages, args.preload))


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

    args = context.args
    return _emit(args.dir, lambda home: search.run(home, args.messages, args.person))


def run_gateway(context: CommandContext) -> int:
    from bench import gateway

    args = context.args
    return _emit(args.dir, lambda home: gateway.run(home, args.conversations, args.messages, args.workers))


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
