"""docs/operations.md stays true: every command it shows is a real CLI command, every variable a setting."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gateway.cli.main import build_parser

from .settings_paths import is_read

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
_FENCE = re.compile(r"```sh\n(.*?)```", re.DOTALL)
_INLINE = re.compile(r"`(mnemogate [^`|…]+)`")
_VARIABLE = re.compile(r"\b(?:MNEMOGATE|ANTHROPIC|OPENAI)_[A-Z0-9_<>]+")


def _commands() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    commands = [match.strip() for match in _INLINE.findall(text)]
    for block in _FENCE.findall(text):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            # `mnemogate …` alone or in a container (`… gateway mnemogate …`), not `systemctl … mnemogate`.
            starts = [
                i
                for i, word in enumerate(words)
                if word == "mnemogate" and (i == 0 or words[i - 1] == "gateway")
            ]
            commands.extend(shlex.join(words[i:]) for i in starts)
    return commands


def test_the_guide_shows_the_operator_commands() -> None:
    shown = {command.split()[1] for command in _commands()}
    assert {"serve", "worker", "check-config", "pair", "backup", "restore"} <= shown


@pytest.mark.parametrize("command", sorted(set(_commands())))
def test_every_command_in_the_guide_parses(command: str) -> None:
    args = build_parser().parse_args(shlex.split(command)[1:])
    assert callable(args.handler)


def test_every_variable_in_the_guide_is_read() -> None:
    names = {name for name in _VARIABLE.findall(DOC.read_text(encoding="utf-8")) if "<" not in name}
    assert names, "the guide names no variables"
    assert sorted(name for name in names if not is_read(name)) == []
