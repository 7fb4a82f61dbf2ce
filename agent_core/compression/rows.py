"""A stored message as compression handles it: the record, plus the shortened text the pre-pass may give it.

Invariants: a row's request-view bytes are the record's ``api_content`` only while the row is unchanged
(an edited row replays its new text); a row converts back to a ``NewMessage`` that is the record verbatim
except for what compression deliberately changed. Conversion to the model's view mirrors the turn loop's
transcript (``api_content`` substituted, tool calls as ``{"id", "name", "arguments"}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_core.llm import ChatMessage, Role, ToolCall
from agent_core.storage import MessageRecord, NewMessage

from .estimate import message_tokens

_VIEW_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "tool": "tool", "system": "system"}

StoredCalls = tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Row:
    """One message of the segment being compressed; ``content``/``tool_calls`` start equal to the record's."""

    record: MessageRecord
    content: str | None
    tool_calls: StoredCalls | None

    @classmethod
    def of(cls, record: MessageRecord) -> Row:
        return cls(record, record.content, record.tool_calls)

    @property
    def role(self) -> str:
        return self.record.role

    @property
    def changed(self) -> bool:
        return self.content != self.record.content or self.tool_calls != self.record.tool_calls

    @property
    def call_ids(self) -> tuple[str, ...]:
        return tuple(str(call.get("id", "")) for call in self.tool_calls or ())

    @property
    def text(self) -> str:
        return self.content or ""

    @property
    def is_visible_reply(self) -> bool:
        """An assistant message the person saw as a reply (not a bare tool-call step)."""
        return self.role == "assistant" and bool(self.text.strip())

    def with_content(self, content: str) -> Row:
        return Row(self.record, content, self.tool_calls)

    def with_calls(self, calls: StoredCalls | None) -> Row:
        return Row(self.record, self.content, calls)

    def chat(self) -> ChatMessage | None:
        """This row as the model sees it; None for roles the request view skips."""
        role = _VIEW_ROLES.get(self.role)
        if role is None:
            return None
        api = self.record.api_content
        text = api if api is not None and not self.changed else self.text
        return ChatMessage(
            role=role,
            content=text,
            tool_calls=tuple(ToolCall.from_stored(raw) for raw in self.tool_calls or ()),
            tool_call_id=self.record.tool_call_id,
            name=self.record.tool_name if role == "tool" else None,
        )

    def tokens(self) -> int:
        message = self.chat()
        return 0 if message is None else message_tokens(message)

    def to_new_message(self) -> NewMessage:
        """The row for the child segment: verbatim, keeping ``api_content`` only if nothing changed."""
        record = self.record
        return NewMessage(
            role=record.role,
            content=self.content,
            tool_calls=list(self.tool_calls) if self.tool_calls is not None else None,
            tool_call_id=record.tool_call_id,
            tool_name=record.tool_name,
            reasoning=record.reasoning,
            author=record.author,
            platform_message_id=record.platform_message_id,
            api_content=None if self.changed else record.api_content,
            created_at=record.created_at,
        )
