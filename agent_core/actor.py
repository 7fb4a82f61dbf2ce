"""Who is acting: one frozen value carried from the inbound pipeline through queue, turn, tools, compression,
search and the memory audit, so adding a field changes one type.

Invariant: ``person_id`` is the owner of every memory a turn reads or writes; nothing acts for a person
without naming them here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Actor:
    """The person (and account) a turn, command or tool call acts for, and in which conversation.

    ``label``: what the memory audit records as the writer (``agent`` for the model's tool calls,
    ``admin:cli`` for an operator's command, ``user:web`` for a person editing their own memory).
    """

    person_id: str
    conversation_id: str | None = None
    is_admin: bool = False
    platform: str = "cli"
    account_id: str | None = None
    display_name: str | None = None
    label: str = "agent"

    def in_conversation(self, conversation_id: str | None) -> Actor:
        """The same actor, acting in ``conversation_id``."""
        return replace(self, conversation_id=conversation_id)

    def as_writer(self, label: str) -> Actor:
        """The same actor, recorded in the memory audit as ``label`` (e.g. ``memory-flush``)."""
        return replace(self, label=label)

    def conversation(self) -> str:
        """The conversation acted in; a turn and a compression always have one (``ValueError`` if not)."""
        if self.conversation_id is None:
            raise ValueError(f"actor {self.person_id} acts outside any conversation")
        return self.conversation_id
