"""Who a turn runs for: the person, their rights, the conversation and where the message came from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnScope:
    """Identity of one turn; tools act only within it (a person never reaches another's memory)."""

    conversation_id: str
    person_id: str
    is_admin: bool = False
    platform: str = "cli"
    actor: str = "agent"
