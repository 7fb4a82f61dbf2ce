"""The client-key port: the one secret a deployment hashes web chat cookies and API tokens with.

Invariants every backend keeps: the first key stored is kept for good (never replaced), so a cookie is the
same account on every host and after every restart; when several processes store a key at once, exactly
one is stored and every one of them gets that one; a stored key that is not ``KEY_BYTES`` long is
``ClientKeyUnusableError``, never silently replaced (browsers would lose their conversations). The key is a
secret: it is never shown or logged.
"""

from __future__ import annotations

from typing import Protocol

from agent_core.storage.errors import StateError

KEY_BYTES = 32


class ClientKeyUnusableError(StateError):
    """The stored key cannot be read, created or is damaged; the message says what to do."""


class ClientKeyStore(Protocol):
    """Where the deployment's client key lives (SQLite: a file in the home; PostgreSQL: a row every host
    reads)."""

    async def keep(self, proposed: bytes) -> bytes:
        """The deployment's key: the one stored, or ``proposed`` stored now when there is none."""
        ...
