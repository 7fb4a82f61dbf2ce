"""How usable the store and its search index are right now, as readiness reports them.

Invariants: a missing or untrusted sidecar is ``unavailable``; a sidecar that this process's indexer is
rebuilding or catching up on, that has indexed nothing while state.db holds messages, or that lags
state.db by more than ``BEHIND_AFTER_MESSAGES``, is ``rebuilding``; positions are
message ids (``indexed_up_to`` of ``newest``), read in O(1) from the progress mark and sqlite_sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

SearchState = Literal["ok", "rebuilding", "unavailable"]

# Well above the indexer's backpressure point (StateSettings.index_max_backlog, 1,500 by default), so
# ordinary bursts never read as a rebuild.
BEHIND_AFTER_MESSAGES = 5000


@dataclass(frozen=True, slots=True)
class SearchHealth:
    """The search index's state; ``detail`` says why it is unavailable."""

    state: SearchState
    indexed_up_to: int
    newest: int
    indexer_failures: int = 0
    detail: str = ""

    @classmethod
    def judge(
        cls, indexed_up_to: int, newest: int, *, rebuilding: bool, indexer_failures: int
    ) -> SearchHealth:
        # Nothing indexed while messages exist: a new or reset index that some process is (re)building,
        # which a process without the indexer lock cannot otherwise tell from ordinary lag.
        behind = newest - indexed_up_to > BEHIND_AFTER_MESSAGES or (indexed_up_to == 0 and newest > 0)
        state: SearchState = "rebuilding" if (rebuilding and indexed_up_to < newest) or behind else "ok"
        return cls(state, indexed_up_to, newest, indexer_failures)


class StoreHealth(Protocol):
    """What readiness asks a storage backend: can it read and write now, and can search answer."""

    async def check_readable(self) -> None:
        """Prove reads work now; raises a ``StateError`` subclass if not (damage seen since opening too)."""
        ...

    async def check_writable(self) -> None:
        """Prove a write can commit now; raises a ``StateError`` subclass if not."""
        ...

    async def search_health(self) -> SearchHealth:
        """Whether search answers from a complete index now, is being rebuilt, or cannot answer."""
        ...
