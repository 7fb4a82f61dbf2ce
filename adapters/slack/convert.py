"""Translation of a Slack Events API ``event_callback`` body into an ``InboundMessage``; pure.

Invariants: ``event_id`` is the envelope's ``event_id`` (what the inbound ledger dedupes on, so Slack's
retried deliveries collapse); ``workspace`` is the team id; a message inside a thread is a THREAD chat whose
``thread_id`` is its ``thread_ts``, and a top-level ``app_mention`` in a channel becomes the THREAD rooted at
the mention (``reply_in_thread``) so the answer and every follow-up share one conversation; a channel
``message`` that mentions the bot yields ``None`` because its ``app_mention`` twin carries it (one turn per
mention); the bot's own messages, edits, deletions and joins yield ``None``; other bots' messages come
through with ``sender.is_bot``.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import Any

from gateway.contracts import Attachment, ChatKind, ChatRef, InboundMessage, UserRef

PLATFORM = "slack"
_USER_SUBTYPES = frozenset({None, "file_share", "thread_broadcast", "me_message", "bot_message"})
_KINDS = {"im": ChatKind.DM, "mpim": ChatKind.GROUP, "group": ChatKind.GROUP, "channel": ChatKind.CHANNEL}
_PREFIX_TYPES = {"D": "im", "G": "group", "C": "channel"}

ThreadKey = tuple[str, str, str]
"""(team id, channel id, thread_ts): a thread the bot takes part in."""


@dataclass(frozen=True)
class BotIdentity:
    """Who the bot is, learned from ``auth.test`` at start."""

    user_id: str
    bot_id: str | None = None

    @property
    def mention(self) -> str:
        return f"<@{self.user_id}>"


def _channel_type(event: Mapping[str, Any]) -> str:
    given = event.get("channel_type")
    if isinstance(given, str) and given:
        return given
    # app_mention events carry no channel_type; the id's first letter tells the conversation type.
    return _PREFIX_TYPES.get(str(event.get("channel", ""))[:1], "channel")


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _attachment(file: Mapping[str, Any]) -> Attachment:
    mime = str(file.get("mimetype") or "") or None
    major = (mime or "").partition("/")[0]
    kind = major if major in ("image", "audio", "video") else "file"
    size = file.get("size")
    return Attachment(
        kind, name=file.get("name"), mime_type=mime, size=size if isinstance(size, int) else None
    )


def _display_name(event: Mapping[str, Any]) -> str | None:
    profile = event.get("user_profile")
    if isinstance(profile, Mapping):
        name = profile.get("display_name") or profile.get("real_name")
        return str(name) if name else None
    return None


def is_own(event: Mapping[str, Any], bot: BotIdentity) -> bool:
    return event.get("user") == bot.user_id or (bot.bot_id is not None and event.get("bot_id") == bot.bot_id)


def thread_key(chat: ChatRef) -> ThreadKey | None:
    if chat.thread_id is None:
        return None
    return (chat.workspace or "", chat.chat_id, chat.thread_id)


def event_to_inbound(
    body: Mapping[str, Any],
    bot: BotIdentity,
    *,
    joined_threads: Container[ThreadKey] = frozenset(),
    reply_in_thread: bool = True,
) -> InboundMessage | None:
    """The ``InboundMessage`` for an Events API body, or ``None`` when it carries no new message for us."""
    event = body.get("event")
    if body.get("type") != "event_callback" or not isinstance(event, Mapping):
        return None
    event_type, subtype = event.get("type"), event.get("subtype")
    if event_type not in ("message", "app_mention") or subtype not in _USER_SUBTYPES or is_own(event, bot):
        return None
    sender_id = event.get("user") or event.get("bot_id")
    if not sender_id or "channel" not in event or "ts" not in event:
        return None
    channel_type = _channel_type(event)
    raw_text = str(event.get("text") or "")
    mentioned = bot.mention in raw_text
    if event_type == "message" and channel_type != "im" and mentioned:
        return None
    team = str(body.get("team_id") or event.get("team") or "") or None
    channel, ts = str(event["channel"]), str(event["ts"])
    thread_ts = str(event["thread_ts"]) if event.get("thread_ts") else None
    in_thread = thread_ts is not None and thread_ts != ts
    if in_thread:
        kind, thread_id = ChatKind.THREAD, thread_ts
    elif event_type == "app_mention" and reply_in_thread and channel_type != "im":
        kind, thread_id = ChatKind.THREAD, ts
    else:
        kind, thread_id = _KINDS.get(channel_type, ChatKind.CHANNEL), None
    chat = ChatRef(PLATFORM, channel, kind, workspace=team, thread_id=thread_id)
    files = event.get("files")
    return InboundMessage(
        event_id=str(body.get("event_id") or f"{channel}:{ts}"),
        chat=chat,
        sender=UserRef(
            PLATFORM,
            str(sender_id),
            display_name=_display_name(event),
            is_bot=bool(event.get("bot_id")) or subtype == "bot_message",
        ),
        text=_unescape(raw_text.replace(bot.mention, "").strip()),
        message_id=ts,
        reply_to_message_id=thread_ts if in_thread else None,
        mentions_bot=channel_type == "im" or mentioned,
        replies_to_bot=in_thread and (team or "", channel, thread_ts) in joined_threads,
        attachments=tuple(_attachment(f) for f in files if isinstance(f, Mapping))
        if isinstance(files, list)
        else (),
        sent_at=float(ts),
        raw=body,
    )
