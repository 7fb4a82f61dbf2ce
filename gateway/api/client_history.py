"""What an API request's messages add to its conversation: the message to answer, the client's
instructions, and the earlier turns the conversation does not hold.

Rules: system (and developer) messages are instructions for this reply; the last message that is not one
must be the user's — it is what is said, stored like any platform message; the messages before it are the
client's earlier turns. An earlier turn the conversation already holds is not given again: user turns are
matched in order against the conversation's stored user messages (same text, compared without surrounding
whitespace); an assistant or tool turn goes with the user turn before it (held when that one is; before
any user turn, when the conversation stored the same reply); and a turn an earlier request already gave
as client context is held too, so a client whose history began before the conversation did sends it once.
Instructions and the turns not held reach the model inside the client-context fence on the message's
request bytes (``agent_core.agent.client_context``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_core.agent import (
    ClientTurn,
    client_context_block,
    context_line,
    given_context,
    with_client_context,
)
from agent_core.storage import MessageRecord
from gateway.storage.admin_reads import AdminReads

INSTRUCTION_ROLES = frozenset({"system", "developer"})
_TURN_ROLES = frozenset({"user", "assistant", "tool", "function"})


class UnanswerableRequestError(ValueError):
    """The request has no user message to answer (it ends with another role, or says nothing)."""


class Transcripts(Protocol):
    async def conversation_messages(self, conversation_id: str) -> list[MessageRecord]:
        """Every message of every segment of the conversation, oldest segment first."""
        ...


@dataclass(frozen=True)
class StoredHistory:
    """What a conversation holds of a client's turns: its user messages and replies, and the client
    context its messages were given (every block, one string)."""

    turns: tuple[ClientTurn, ...] = ()
    given: str = ""

    def gave(self, turn: ClientTurn) -> bool:
        line = context_line(turn)
        return line is not None and f"\n{line}\n" in self.given


async def stored_history(reads: AdminReads, transcripts: Transcripts, key_prefix: str) -> StoredHistory:
    """The history of the live conversation of ``key_prefix`` (empty when there is none)."""
    conversation = await reads.live_conversation(key_prefix)
    if conversation is None:
        return StoredHistory()
    messages = await transcripts.conversation_messages(conversation)
    turns = tuple(
        ClientTurn(m.role, m.content or "")
        for m in messages
        if m.role == "user" or (m.role == "assistant" and not m.tool_calls)
    )
    given = "\n".join(given_context(m.api_content) for m in messages if m.role == "user" and m.api_content)
    return StoredHistory(turns, given)


@dataclass(frozen=True)
class RequestTurns:
    """A request's messages sorted: ``said`` (the user's message), ``instructions``, ``earlier`` turns."""

    said: str
    instructions: tuple[str, ...]
    earlier: tuple[ClientTurn, ...]

    @classmethod
    def of(cls, messages: Sequence[ClientTurn]) -> RequestTurns:
        """Raises ``UnanswerableRequestError`` unless the last message besides instructions is a user's."""
        instructions = tuple(m.text for m in messages if m.role in INSTRUCTION_ROLES and m.text.strip())
        turns = [m for m in messages if m.role in _TURN_ROLES]
        if not turns or turns[-1].role != "user" or not turns[-1].text.strip():
            raise UnanswerableRequestError(
                "the last message (after any system messages) must be a user message with text"
            )
        earlier = tuple(ClientTurn("tool" if m.role == "function" else m.role, m.text) for m in turns[:-1])
        return cls(turns[-1].text, instructions, earlier)

    def not_held(self, stored: StoredHistory) -> tuple[ClientTurn, ...]:
        """The earlier turns the stored conversation lacks, in order."""
        stored_users = [t.text.strip() for t in stored.turns if t.role == "user"]
        stored_replies = {t.text.strip() for t in stored.turns if t.role == "assistant"}
        position = 0
        user_held: bool | None = None  # whether the latest user turn is held (None: none seen yet)
        missing: list[ClientTurn] = []
        for turn in self.earlier:
            if turn.role == "user":
                found = _index_from(stored_users, turn.text.strip(), position)
                position = position if found is None else found + 1
                user_held = found is not None or stored.gave(turn)
                held = user_held
            elif user_held is not None:
                held = user_held
            else:
                held = turn.text.strip() in stored_replies or stored.gave(turn)
            if not held:
                missing.append(turn)
        return tuple(missing)

    def model_text(self, stored: StoredHistory, *, budget_chars: int) -> str | None:
        """What the model gets for ``said``: None when the request adds nothing to the conversation."""
        block = client_context_block(self.instructions, self.not_held(stored), budget_chars=budget_chars)
        return with_client_context(self.said, block) if block else None


def _index_from(items: Sequence[str], wanted: str, start: int) -> int | None:
    for index in range(start, len(items)):
        if items[index] == wanted:
            return index
    return None
