"""Session keys: which conversation an inbound message belongs to, as one typed value.

A key has ONE string form, used only at storage and API edges; ``SessionKey.parse(key.to_string())``
gives the key back for every key (a property test checks it). Parts are percent-escaped so ids may
contain any character, including the separator.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import quote, unquote

_SEPARATOR = ":"
_NONE = "-"


class KeyScope(StrEnum):
    DM = "dm"
    GROUP = "group"
    CHANNEL = "channel"
    THREAD = "thread"


class SessionKeyError(ValueError):
    """A string is not a session key."""


def _escape(part: str | None) -> str:
    if part is None:
        return _NONE
    # quote() never escapes "-", which marks a missing part, so escape it by hand.
    return quote(part, safe="").replace("-", "%2D")


def _unescape(part: str) -> str | None:
    return None if part == _NONE else unquote(part)


@dataclass(frozen=True)
class SessionKey:
    """(platform, workspace, scope, chat, thread, user); ``user_id`` only for per-user conversations."""

    platform: str
    scope: KeyScope
    chat_id: str
    workspace: str | None = None
    thread_id: str | None = None
    user_id: str | None = None

    def to_string(self) -> str:
        parts = (self.platform, self.workspace, self.scope.value, self.chat_id, self.thread_id, self.user_id)
        return _SEPARATOR.join(_escape(p) for p in parts)

    @classmethod
    def parse(cls, text: str) -> SessionKey:
        parts = text.split(_SEPARATOR)
        if len(parts) != 6:
            raise SessionKeyError(f"not a session key: {text!r}")
        platform, workspace, scope, chat_id, thread_id, user_id = (_unescape(p) for p in parts)
        if platform is None or chat_id is None or scope is None:
            raise SessionKeyError(f"session key lacks platform, scope or chat: {text!r}")
        try:
            key_scope = KeyScope(scope)
        except ValueError as exc:
            raise SessionKeyError(f"unknown scope {scope!r} in session key {text!r}") from exc
        return cls(platform, key_scope, chat_id, workspace, thread_id, user_id)

    def __str__(self) -> str:
        return self.to_string()
