"""``mnemogate sessions list|show`` and the ``worker`` command's registration."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from gateway.cli import sessions_command, worker_command
from gateway.cli.context import CommandContext

from ..delivery.recording_adapter import dm
from ..queue.harness import backbone


def _parse(*argv: str) -> argparse.Namespace:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", default=argparse.SUPPRESS)
    parser = argparse.ArgumentParser(parents=[common])
    commands = parser.add_subparsers(dest="command", required=True)
    for module in (sessions_command, worker_command):
        module.register(commands, common)
    return parser.parse_args(argv)


async def _one_exchange(home: Path) -> str:
    async with backbone(home) as b:
        stop = await b.gateway.pipeline.process(dm("hello", event="e1"))
        await b.wait_sent(1)
    assert stop.conversation_id is not None
    return stop.conversation_id


def test_sessions_list_and_show(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conversation = asyncio.run(_one_exchange(home))
    args = _parse("sessions", "list", "--home", str(home))
    assert args.handler(CommandContext.from_args(args)) == 0
    listing = capsys.readouterr().out
    assert conversation in listing and "live" in listing
    args = _parse("sessions", "show", conversation, "--home", str(home))
    assert args.handler(CommandContext.from_args(args)) == 0
    shown = capsys.readouterr().out
    assert "[user] hello" in shown and "[assistant] echo: hello" in shown
    assert "deliveries: 1 total, 0 pending, 0 failed" in shown
    args = _parse("sessions", "show", "cv_missing", "--home", str(home))
    assert args.handler(CommandContext.from_args(args)) == 2


def test_worker_command_is_registered() -> None:
    args = _parse("worker", "--home", "/tmp/x")
    assert args.handler is worker_command.run
