"""Where per-turn recall comes from: the seam the external memory providers plug into.

A source returns plain text about the person, or None. The turn loop sanitises it, drops it when it
trips the threat scanner, and fences it onto the current user message's request bytes only.
"""

from __future__ import annotations

import logging
from typing import Protocol

from agent_core.actor import Actor
from agent_core.agent.fence import sanitize_recall
from agent_core.threats import Scope, scan

_LOG = logging.getLogger("mnemogate.agent.recall")


class RecallSource(Protocol):
    async def recall(self, actor: Actor, query: str) -> str | None:
        """Text recalled for ``query`` on behalf of ``actor.person_id``, or None."""
        ...


class TurnObserver(Protocol):
    def observe_turn(self, actor: Actor, user: str, assistant: str) -> None:
        """A user turn was answered (``user``: the coalesced user text); must not block the turn."""
        ...


def screened_recall(text: str | None) -> str | None:
    """Recall that is safe to fence: nested fences removed, nothing that looks like an injection."""
    if not text:
        return None
    cleaned = sanitize_recall(text)
    findings = scan(cleaned, Scope.STRICT)
    if findings:
        _LOG.warning("recall dropped: matched %s", ", ".join(f.pattern_id for f in findings))
        return None
    return cleaned or None
