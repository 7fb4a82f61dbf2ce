"""The agent's identity file ``<home>/SOUL.md``: seeded once with a default, then owned by the operator.

Invariants: an existing SOUL.md is never rewritten (the default is written to a temp file and
hard-linked into place, so two processes starting at once cannot clobber an operator's edit and a crash
never leaves a half-written default); an unreadable file falls back to the
default identity with a notice instead of failing the turn.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agent_core.fsync import fsync_directory

_log = logging.getLogger(__name__)

DEFAULT_SOUL = """\
You are mnemogate's assistant: a warm, capable helper that people reach from their chat apps.

Be honest. Say plainly when you do not know something or cannot do it, and never invent facts,
memories or past conversations. If you are unsure, say so and suggest how to find out.

Be kind and direct. Answer the question that was asked, keep replies short enough for a chat window,
and go into depth when someone wants it. Match the language and tone of the person you are talking to.

Remember what matters. You keep compact notes about the people you talk with and the work you share,
so they do not have to repeat themselves. What one person tells you is theirs: never reveal one
person's notes or conversations to anyone else.
"""


@dataclass(frozen=True)
class Identity:
    """The identity text for the stable tier and what happened while loading it."""

    text: str
    path: Path
    written: bool
    notice: str | None = None


def ensure_soul(home: Path, file_name: str = "SOUL.md") -> bool:
    """Write the default SOUL.md if there is none; True when this call created it."""
    path = home / file_name
    if path.exists():
        return False
    home.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=home, prefix=f".{file_name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(DEFAULT_SOUL)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644)
        # link() never replaces an existing file: a whole default appears, or nothing changes.
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    fsync_directory(home)
    _log.info("wrote default identity to %s", path)
    return True


def load_identity(home: Path, file_name: str = "SOUL.md") -> Identity:
    """The identity text, seeding the default first if the file is missing."""
    path = home / file_name
    try:
        written = ensure_soul(home, file_name)
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        _log.warning("identity file %s unusable, using the default: %s", path, exc)
        notice = f"[{file_name} is unusable ({exc.strerror or exc}); the default identity is used.]"
        return Identity(DEFAULT_SOUL, path, False, notice)
    if not text.strip():
        return Identity(DEFAULT_SOUL, path, written, f"[{file_name} is empty; the default identity is used.]")
    return Identity(text, path, written)
