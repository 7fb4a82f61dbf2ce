"""Watching the semantic index fill: a progress bar on a terminal, a line every few seconds elsewhere.

Invariants: it only reads (``SearchIndex.semantic_status``); it returns when every window carries a vector,
when ``timeout`` passes, or on Ctrl-C — the embedding itself goes on in the background either way (in
whichever process holds the embedder lock: this one while it runs, ``serve`` or ``worker`` otherwise);
the rate it reports is windows per second over the time it watched.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TextIO

from agent_core.storage.search_index import SearchIndex
from agent_core.storage.search_windows import SemanticStatus

_BAR = 30
_PLAIN_EVERY_S = 10.0


@dataclass(frozen=True, slots=True)
class EmbeddingProgress:
    """What a watch saw: the last status, windows embedded while watching, and for how long."""

    status: SemanticStatus
    embedded: int
    seconds: float

    @property
    def windows_per_s(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0

    @property
    def done(self) -> bool:
        return self.status.state == "ready"

    def summary(self) -> str:
        state = self.status
        if state.state in ("off", "unavailable"):
            return f"semantic index: {state.state} ({state.detail})"
        line = f"semantic index: {state.embedded}/{state.windows} windows embedded"
        if self.embedded:
            line += f"; {self.embedded} in {self.seconds:.1f} s ({self.windows_per_s:.1f} windows/s)"
        if not self.done:
            line += "; the rest is embedded in the background (by this home's serve or worker)"
        return line


async def watch_embedding(
    index: SearchIndex,
    out: TextIO,
    *,
    timeout: float,  # noqa: ASYNC109 - a deadline for watching, not a cancel
    poll_s: float = 0.5,
) -> EmbeddingProgress:
    """Show the semantic index filling until it is complete, ``timeout`` passes, or Ctrl-C."""
    started = time.monotonic()
    first = status = await index.semantic_status()
    tty = out.isatty()
    last_line = started
    try:
        while status.state == "building" and time.monotonic() - started < timeout:
            now = time.monotonic()
            if tty:
                out.write("\r" + _bar(status, status.embedded - first.embedded, now - started))
                out.flush()
            elif now - last_line >= _PLAIN_EVERY_S:
                out.write(_bar(status, status.embedded - first.embedded, now - started) + "\n")
                last_line = now
            await asyncio.sleep(poll_s)
            status = await index.semantic_status()
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
    if tty and first.state == "building":
        out.write("\r" + _bar(status, status.embedded - first.embedded, time.monotonic() - started) + "\n")
    return EmbeddingProgress(status, max(0, status.embedded - first.embedded), time.monotonic() - started)


def _bar(status: SemanticStatus, embedded: int, seconds: float) -> str:
    share = status.embedded / status.windows if status.windows else 1.0
    filled = int(share * _BAR)
    rate = embedded / seconds if seconds > 0 else 0.0
    return (
        f"embedding [{'#' * filled}{'.' * (_BAR - filled)}] {status.embedded}/{status.windows} windows"
        f"  {rate:.1f}/s"
    )
