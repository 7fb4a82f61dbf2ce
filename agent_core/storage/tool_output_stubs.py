"""Stubs of removed tool outputs: what replaces a large, old tool output when retention removes it.

Invariants: a stub is far shorter than ``TOOL_OUTPUT_FLOOR_CHARS``, so a stubbed output is never picked
again; backends index only tool outputs longer than the floor (a partial index in the agent's ladder), so
finding the outputs to stub never reads the short ones. A stubbed message keeps its id, role, tool call and
tool name: the transcript still shows that the tool ran and what it was asked.
"""

from __future__ import annotations

from typing import Final

TOOL_OUTPUT_FLOOR_CHARS: Final = 1_000
"""Tool outputs at most this long are never stubbed."""


def tool_output_stub(chars: int, day: str) -> str:
    """The text that replaces a removed tool output: how long it was and on which day it was removed."""
    return f"[tool output of {chars:,} chars removed by retention on {day}]"
