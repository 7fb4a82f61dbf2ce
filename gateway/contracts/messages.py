"""The platform-neutral message and identity types every adapter produces and consumes.

Frozen dataclasses with no third-party imports. Platform objects travel only in ``raw``, which only the
adapter that made the message reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ChatKind(StrEnum):
    """Where a message was said: a direct message, a group/channel, or a thread/forum topic inside one."""

    DM = "dm"
    GROUP = "group"
    CHANNEL = "channel"
    THREAD = "thread"


@dataclass(frozen=True)
class UserRef:
    """A platform account."""

    platform: str
    user_id: str
    display_name: str | None = None
    is_bot: bool = False


@dataclass(frozen=True)
class ChatRef:
    """A place to read from and reply to. ``workspace`` is the Slack team / Discord guild, if any."""

    platform: str
    chat_id: str
    kind: ChatKind
    workspace: str | None = None
    thread_id: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class Attachment:
    """A file that came with a message; stored as text (``[image] name``), never as bytes."""

    kind: str
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None
    text_summary: str | None = None

    def as_text(self) -> str:
        label = self.name or self.mime_type or "file"
        summary = f": {self.text_summary}" if self.text_summary else ""
        return f"[{self.kind}] {label}{summary}"


@dataclass(frozen=True)
class InboundMessage:
    """One platform event carrying a message for the bot.

    ``event_id`` is the platform's unique id of the delivery (Telegram update_id, Slack event_id,
    Discord message id) and is what the inbound ledger dedupes on. ``caller_waits``: the sender is
    waiting on this very hand-off (an HTTP request to the embedded web chat or API), so a refusal is
    returned to it in the sink's ``InboundOutcome`` instead of being sent later as a notice.
    ``model_text``: what the model is given for this message instead of its text, when the sender attached
    request-scoped context to it (the OpenAI-compatible API's system messages and earlier turns); stored as
    the message's request bytes (``api_content``) only, never shown, searched or remembered as said.
    """

    event_id: str
    chat: ChatRef
    sender: UserRef
    text: str
    message_id: str | None = None
    reply_to_message_id: str | None = None
    mentions_bot: bool = False
    replies_to_bot: bool = False
    attachments: tuple[Attachment, ...] = ()
    sent_at: float | None = None
    caller_waits: bool = False
    model_text: str | None = None
    raw: object = field(default=None, compare=False, repr=False)

    @property
    def platform(self) -> str:
        return self.chat.platform

    def full_text(self) -> str:
        """The text plus a line per attachment, as stored and searched."""
        parts = [self.text] if self.text else []
        parts += [attachment.as_text() for attachment in self.attachments]
        return "\n".join(parts)


@dataclass(frozen=True)
class OutboundMessage:
    """One chunk of a reply, already rendered for the platform and within its limits.

    ``kind`` says what it is: "reply" (a turn's answer), "error" (a turn that failed), "command" (a
    command's reply), "budget" (a turn a reached budget refused), or one of the gateway's notices ("ack",
    "notice", "denied", "rate_limited").
    """

    chat: ChatRef
    text: str
    idempotency_key: str
    reply_to_message_id: str | None = None
    kind: str = "reply"


@dataclass(frozen=True)
class SendReceipt:
    """What the platform answered to a successful send."""

    platform_message_id: str
