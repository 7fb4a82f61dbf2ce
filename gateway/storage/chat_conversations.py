"""The chat-window port: one chat's conversations as the person in it sees them (the web chat's sidebar).

Invariants every backend keeps: a chat is named by a session-key prefix matched exactly (byte for byte, as
``AdminReads`` does), and nothing here reads or changes a conversation outside it; ``reopen`` keeps the
conversation's identity — its id, its tip segment and that segment's frozen system prompt — and in ONE
transaction ends the key's other live conversation (``end_reason`` ``switched``) and makes the chosen one
live again, so the key never has two live conversations nor, after a crash, none it did not have before;
the chain is untouched (no segment is created, none forks); a reopened conversation counts as active from
the moment it was reopened, so an idle-reset policy never ends it on its next message for the quiet time
before it was reopened. Renaming changes only the title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .admin_reads import MessageRow
from .outbox import ChatNotice

SWITCHED = "switched"
"""The end reason of a conversation left for another one of the same chat (``reopen``)."""
TITLE_MAX = 200
"""Longest title kept; longer ones are cut."""


def clean_title(title: str | None) -> str | None:
    """A title as stored: whitespace runs made one space, at most ``TITLE_MAX`` characters; None if blank."""
    cleaned = " ".join((title or "").split())[:TITLE_MAX]
    return cleaned or None


@dataclass(frozen=True, slots=True)
class ChatConversation:
    """One conversation of a chat: its title (None until renamed), the start of its first user message (for
    an untitled one), when it began and was last active (newest message or reopening), and whether it is
    the chat's live one."""

    id: str
    title: str | None
    first_message: str | None
    created_at: float
    last_active_at: float
    ended_at: float | None
    user_messages: int

    @property
    def live(self) -> bool:
        return self.ended_at is None


@dataclass(frozen=True, slots=True)
class CommandNotice:
    """A command reply or notice sent to the chat, with the command text that asked for it (if any) and
    its outbox idempotency key (a chat window names the notice as its delivery does: ``<key>#0``)."""

    notice: ChatNotice
    request_text: str | None
    key: str | None = None


@dataclass(frozen=True, slots=True)
class ChatWindow:
    """What the chat shows now: the live conversation's tip transcript, the command replies and notices
    filed under it, and those filed under no conversation since it became live (began, or was reopened);
    without a live one, the notices since the last one ended."""

    conversation_id: str | None
    transcript: tuple[MessageRow, ...]
    notices: tuple[CommandNotice, ...]


@dataclass(frozen=True, slots=True)
class Reopened:
    """``conversation_id`` is the chat's live conversation now; ``ended``: the one it replaced, if any."""

    conversation_id: str
    ended: str | None


class ChatConversations(Protocol):
    """One chat's conversations: list, show the live one, rename, reopen."""

    async def conversations(self, key_prefix: str, *, limit: int = 50) -> tuple[ChatConversation, ...]:
        """The chat's conversations, most recently active first: the live one, and ended ones that hold
        a message. ValueError for an empty prefix."""
        ...

    async def window(self, key_prefix: str, chat_ref: str, *, limit: int = 200) -> ChatWindow:
        """One read: the chat window of the live conversation (see ``ChatWindow``), the newest ``limit``
        transcript rows and notices (each notice with the command text that asked for it)."""
        ...

    async def rename(self, key_prefix: str, conversation_id: str, title: str | None) -> bool:
        """Set the title (None or blank: back to the first message); False when the conversation is not
        this chat's."""
        ...

    async def reopen(self, key_prefix: str, conversation_id: str) -> Reopened | None:
        """Make the conversation the live one of its session key again (see the module invariants); None
        when it is not this chat's. Reopening the live one changes nothing."""
        ...
