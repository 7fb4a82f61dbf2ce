"""The README works for someone on a fresh clone: its commands run as written after ``make run``.

``make run`` installs into ``.venv`` only, so every shown command is ``.venv/bin/mnemogate …`` (and parses);
platform extras are installed with ``make run EXTRAS=…``; nothing cites a document the repository lacks.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from gateway.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
# What a user runs: everything before the architecture notes (whose table names modules, not commands).
USAGE = README.split("\n## Architecture", 1)[0]
_BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)
_INLINE = re.compile(r"`([^`\n]*mnemogate [^`\n]*)`")
_COMMAND = re.compile(r"(?:^|\s)((?:\S*/)?mnemogate) (?=[a-z-])")
VENV_COMMAND = ".venv/bin/mnemogate"


def _shown() -> list[str]:
    """Every command line the usage part shows: lines of code blocks and inline code that run mnemogate."""
    lines = [line for block in _BLOCK.findall(USAGE) for line in block.splitlines()]
    return [line for line in lines + _INLINE.findall(USAGE) if _COMMAND.search(line)]


def test_every_command_uses_the_venv_that_make_run_installs() -> None:
    shown = _shown()
    assert len(shown) >= 12
    bare = [line for line in shown if any(m != VENV_COMMAND for m in _COMMAND.findall(line))]
    assert bare == []


def _sub_commands(line: str) -> list[str]:
    """The sub-command words of a shown command or synopsis (``pair list|approve CODE`` -> pair list)."""
    words = line.split("#")[0].split(VENV_COMMAND, 1)[1].split()
    names: list[str] = []
    for word in words:
        if not re.fullmatch(r"[a-z][a-z-]*(?:\|[a-z-]+)*", word):
            break
        names.append(word.split("|")[0])
    return names


@pytest.mark.parametrize("line", sorted(set(_shown())))
def test_every_shown_command_names_real_sub_commands(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    names = _sub_commands(line)
    assert names, line
    with contextlib.suppress(SystemExit):  # a synopsis leaves out required arguments
        build_parser().parse_args(names)
    assert "invalid choice" not in capsys.readouterr().err


def test_platform_extras_are_installed_through_make_run() -> None:
    assert "make run EXTRAS=telegram" in README


def test_no_citation_of_a_document_the_repository_lacks() -> None:
    assert "DESIGN" not in README
