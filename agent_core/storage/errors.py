"""The state store's specific exceptions; each message is one line a CLI can print without a traceback."""

from __future__ import annotations

from pathlib import Path


class StateError(Exception):
    """Base class of every error raised by agent_core.storage.sqlite."""


class StateUnavailableError(StateError):
    """The database file cannot be used (corrupt, not a database, a directory, no permission).

    ``damaged`` says the file itself is broken (corrupt, or not a database) rather than out of reach
    (permissions, a full disk): damage does not heal by retrying.
    """

    def __init__(self, path: Path, reason: str, *, damaged: bool = False) -> None:
        self.path = path
        self.reason = reason
        self.damaged = damaged
        super().__init__(self._describe())

    def _describe(self) -> str:
        return f"state database {self.path} is unusable: {self.reason}"


class StateDamagedError(StateUnavailableError):
    """state.db is empty, unreadable or fails its integrity check where a database with data is expected.

    Raised when the store opens, so a damaged file is never silently replaced by a new empty database.
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, reason, damaged=True)

    def _describe(self) -> str:
        return (
            f"state database {self.path} is damaged: {self.reason}; restore a backup "
            "(mnemogate restore BACKUP --force), or start a new database with mnemogate serve --new-state "
            "(the damaged file is moved aside, not deleted)"
        )


class WriteContentionError(StateError):
    """A write could not get the database write lock within the retry budget."""

    def __init__(self, path: Path, attempts: int, last_error: str) -> None:
        self.path = path
        self.attempts = attempts
        super().__init__(
            f"state database {path} stayed locked after {attempts} write attempts ({last_error})"
        )


class UnknownSegmentError(StateError):
    """No segment (session) or conversation has the given id."""

    def __init__(self, segment_id: str) -> None:
        self.segment_id = segment_id
        super().__init__(f"unknown segment or conversation {segment_id!r}")


class UnknownMessageError(StateError):
    """No message has the given id."""

    def __init__(self, message_id: int) -> None:
        self.message_id = message_id
        super().__init__(f"unknown message {message_id}")


class SearchIndexUnavailableError(StateError):
    """The full-text sidecar index cannot be read right now (it is being rebuilt or is damaged)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(f"search index {path} is unavailable: {reason}")


class StoreClosedError(StateError):
    """The StateStore was used after close()."""

    def __init__(self) -> None:
        super().__init__("the state store is closed")
