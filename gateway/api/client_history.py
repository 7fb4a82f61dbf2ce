"""What an API request's messages add to its conversation: the message to answer, the client's
instructions, and the earlier turns the conversation does not hold.

Rules: system (and developer) messages are instructions for this reply; the last message that is not one
must be the user's — it is what is said, stored like any platform message; the messages before it are the
client's earlier turns. An earlier turn the conversation already holds is not repeated: user turns are
matched in order against the conversation's stored user messages (same text, compared without surrounding
whitespace), an assistant or tool turn goes with the user turn before it (held when that one is; before
any user turn, when the conversation stored the same reply). Instructions and the turns not held reach the
model inside the client-context fence on the message's request bytes (``agent_core.agent.client_context``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_core.agent import ClientTurn, client_context_block, with_client_context
from gateway.storage.admin_reads import MAX_PAGE, AdminReads

INSTRUCTION_ROLES = frozenset({"system", "developer"})
_TURN_ROLES = frozenset({"user", "assistant", "tool"})


class UnanswerableRequestError(ValueError):
    """The request has no user message to answer (it ends with another role, or says nothing)."""


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
        turns = [m for m in messages if m.role in _TURN_ROLES or m.role == "function"]
        if not turns or turns[-1].role != "user" or not turns[-1].text.strip():
            raise UnanswerableRequestError(
                "the last message (after any system messages) must be a user message with text"
            )
        earlier = tuple(ClientTurn("tool" if m.role == "function" else m.role, m.text) for m in turns[:-1])
        return cls(turns[-1].text, instructions, earlier)

    def not_held(self, stored: Sequence[ClientTurn]) -> tuple[ClientTurn, ...]:
        """The earlier turns the stored conversation (its user and assistant messages, in order) lacks."""
        stored_users = [t.text.strip() for t in stored if t.role == "user"]
        stored_replies = {t.text.strip() for t in stored if t.role == "assistant"}
        position = 0
        user_held: bool | None = None  # whether the latest user turn is held (None: none seen yet)
        missing: list[ClientTurn] = []
        for turn in self.earlier:
            if turn.role == "user":
                found = _index_from(stored_users, turn.text.strip(), position)
                user_held = found is not None
                position = position if found is None else found + 1
                held = user_held
            else:
                held = user_held if user_held is not None else turn.text.strip() in stored_replies
            if not held:
                missing.append(turn)
        return tuple(missing)

    def model_text(self, stored: Sequence[ClientTurn], *, budget_chars: int) -> str | None:
        """What the model gets for ``said``: None when the request adds nothing to the conversation."""
        block = client_context_block(self.instructions, self.not_held(stored), budget_chars=budget_chars)
        return with_client_context(self.said, block) if block else None


def _index_from(items: Sequence[str], wanted: str, start: int) -> int | None:
    for index in range(start, len(items)):
        if items[index] == wanted:
            return index
    return None


async def stored_turns(reads: AdminReads, key_prefix: str) -> list[ClientTurn]:
    """The user messages and replies (not tool steps) of the live conversation of ``key_prefix``."""
    conversation = await reads.live_conversation(key_prefix)
    if conversation is None:
        return []
    turns: list[ClientTurn] = []
    after = 0
    while True:
        page = await reads.messages(conversation, after_id=after, limit=MAX_PAGE)
        turns += [
            ClientTurn(m.role, m.content or "")
            for m in page
            if m.role == "user" or (m.role == "assistant" and not m.has_tool_calls)
        ]
        if len(page) < MAX_PAGE:
            return turns
        after = page[-1].id
