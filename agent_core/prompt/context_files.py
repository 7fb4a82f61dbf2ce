"""Discovery and loading of the project context file that forms the prompt's context tier.

Invariants: the candidates are ``.mnemogate.md``, ``AGENTS.md``, ``CLAUDE.md``, ``.cursorrules`` (in
that order of preference within one directory); directories are searched from the workspace upward to
its git root inclusive (the nearest directory with a match wins), or the workspace alone when no
ancestor holds ``.git``; exactly one file is used; its text is screened (see ``screening``) before it
can reach the prompt; a missing or unreadable file never fails the build.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from agent_core.prompt.screening import ScreenedText, screen

_log = logging.getLogger(__name__)

CONTEXT_FILE_NAMES = (".mnemogate.md", "AGENTS.md", "CLAUDE.md", ".cursorrules")
CONTEXT_HEADING = "# Project context"


@dataclass(frozen=True)
class ContextFile:
    """The loaded context file: where it was, how it is named in the prompt, and its screened text."""

    path: Path
    label: str
    screened: ScreenedText | None
    notice: str | None = None

    def render(self) -> str:
        """The context tier."""
        if self.screened is None:
            return f"{CONTEXT_HEADING}\n\n{self.notice}"
        intro = (
            f"Project instructions from {self.label} (written by the operator for this workspace; "
            "follow them where they apply):"
        )
        return f"{CONTEXT_HEADING}\n\n{intro}\n\n{self.screened.text}"


def search_dirs(workspace: Path) -> tuple[Path, ...]:
    """The workspace and its ancestors up to the git root inclusive; only the workspace if no git root."""
    start = workspace.resolve()
    chain = (start, *start.parents)
    for index, directory in enumerate(chain):
        if (directory / ".git").exists():
            return chain[: index + 1]
    return (start,)


def find_context_file(workspace: Path) -> Path | None:
    """The first context file found walking up from ``workspace``, or None."""
    for directory in search_dirs(workspace):
        for name in CONTEXT_FILE_NAMES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
    return None


def load_context_file(workspace: Path, char_limit: int) -> ContextFile | None:
    """The screened context file for ``workspace``, or None when there is none."""
    path = find_context_file(workspace)
    if path is None:
        return None
    label = os.path.relpath(path, workspace.resolve())
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        _log.warning("context file %s could not be read: %s", path, exc)
        return ContextFile(path, label, None, f"[{label} could not be read: {exc.strerror or exc}.]")
    screened = screen(raw, label, char_limit)
    if not screened.text:
        return None
    if screened.blocked:
        _log.warning("context file %s blocked by threat patterns %s", path, ", ".join(screened.blocked_by))
    elif screened.omitted_chars:
        _log.warning(
            "context file %s truncated: %d of %d chars omitted",
            path,
            screened.omitted_chars,
            screened.original_chars,
        )
    return ContextFile(path, label, screened)
