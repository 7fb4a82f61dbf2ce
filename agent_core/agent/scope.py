"""Who a turn runs for: the person, their rights, the conversation and where the message came from."""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.actor import Actor


@dataclass(frozen=True)
class TurnScope:
    """Identity of one turn; tools act only within it (a person never reaches another's memory)."""

    conversation_id: str
    person_id: str
    is_admin: bool = False
    platform: str = "cli"
    actor: str = "agent"

    def as_actor(self) -> Actor:
        """The same identity as the ``Actor`` that the memory providers (and later every layer) take."""
        return Actor(
            person_id=self.person_id,
            conversation_id=self.conversation_id,
            is_admin=self.is_admin,
            platform=self.platform,
            label=self.actor,
        )
