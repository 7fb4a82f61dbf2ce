"""Translation of a python-telegram-bot ``Update`` into an ``InboundMessage``; pure.

Invariants: ``event_id`` is ``str(update_id)`` (what the inbound ledger dedupes on); a forum-topic message
becomes a THREAD chat whose ``thread_id`` is its ``message_thread_id``; ``mentions_bot`` means "addressed
to the bot": always in a private chat, in groups on an @mention of the bot (text or text_mention entity, or
a ``/command@bot``) or in a configured free-response chat; ``replies_to_bot`` ignores the implicit reply
to a forum topic's creation message. Updates that carry no new message yield ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from telegram import Message, MessageEntity, Update
from telegram.constants import ChatType

from gateway.contracts import Attachment, ChatKind, ChatRef, InboundMessage, UserRef

PLATFORM = "telegram"


@dataclass(frozen=True)
class BotIdentity:
    """Who the bot is, learned from getMe at start (or configured)."""

    user_id: int
    username: str | None

    def is_username(self, mention: str) -> bool:
        return self.username is not None and mention.lstrip("@").lower() == self.username.lower()


def chat_ref(message: Message) -> ChatRef:
    chat = message.chat
    topic = str(message.message_thread_id) if message.is_topic_message and message.message_thread_id else None
    if chat.type == ChatType.PRIVATE:
        kind = ChatKind.DM
    elif chat.type == ChatType.CHANNEL:
        kind = ChatKind.CHANNEL
    else:
        kind = ChatKind.THREAD if topic else ChatKind.GROUP
    title = chat.title or chat.full_name
    return ChatRef(PLATFORM, str(chat.id), kind, thread_id=topic, title=title)


def _mentions(entities: dict[MessageEntity, str], bot: BotIdentity) -> bool:
    for entity, text in entities.items():
        if entity.type == MessageEntity.MENTION and bot.is_username(text):
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == bot.user_id:
            return True
        command_bot = text.partition("@")[2]
        if entity.type == MessageEntity.BOT_COMMAND and command_bot and bot.is_username(command_bot):
            return True
    return False


def _reply_target(message: Message) -> Message | None:
    reply = message.reply_to_message
    # Every message in a forum topic "replies" to the topic's creation message; that is not a reply.
    if reply is None or reply.forum_topic_created is not None:
        return None
    return reply


def _command_text(message: Message, text: str, bot: BotIdentity) -> str:
    """``/cmd@thisbot args`` -> ``/cmd args`` so the gateway's command table sees one spelling."""
    head, sep, rest = text.partition(" ")
    if head.startswith("/") and "@" in head:
        command, _, username = head.partition("@")
        if bot.is_username(username):
            return command + sep + rest
    return text


def _attachments(message: Message) -> tuple[Attachment, ...]:
    found: list[Attachment] = []
    if message.photo:
        largest = message.photo[-1]
        found.append(Attachment("image", mime_type="image/jpeg", size=largest.file_size))
    if message.document:
        doc = message.document
        found.append(Attachment("file", name=doc.file_name, mime_type=doc.mime_type, size=doc.file_size))
    if message.voice:
        found.append(Attachment("voice", mime_type=message.voice.mime_type, size=message.voice.file_size))
    if message.audio:
        audio = message.audio
        found.append(
            Attachment("audio", name=audio.file_name, mime_type=audio.mime_type, size=audio.file_size)
        )
    if message.video:
        video = message.video
        found.append(
            Attachment("video", name=video.file_name, mime_type=video.mime_type, size=video.file_size)
        )
    if message.sticker:
        found.append(Attachment("sticker", text_summary=message.sticker.emoji))
    if message.location:
        where = f"{message.location.latitude},{message.location.longitude}"
        found.append(Attachment("location", text_summary=where))
    return tuple(found)


def update_to_inbound(
    update: Update, bot: BotIdentity, free_response_chats: frozenset[str] = frozenset()
) -> InboundMessage | None:
    """The ``InboundMessage`` for ``update``, or ``None`` when it carries no new message from a user."""
    message = update.message
    if message is None or message.from_user is None:
        return None
    chat = chat_ref(message)
    sender = message.from_user
    reply = _reply_target(message)
    replies_to_bot = bool(reply and reply.from_user and reply.from_user.id == bot.user_id)
    addressed = (
        chat.kind == ChatKind.DM
        or _mentions(message.parse_entities(), bot)
        or _mentions(message.parse_caption_entities(), bot)
        or chat.chat_id in free_response_chats
    )
    raw_text = message.text or message.caption or ""
    return InboundMessage(
        event_id=str(update.update_id),
        chat=chat,
        sender=UserRef(PLATFORM, str(sender.id), display_name=sender.full_name, is_bot=sender.is_bot),
        text=_command_text(message, raw_text, bot),
        message_id=str(message.message_id),
        reply_to_message_id=str(reply.message_id) if reply else None,
        mentions_bot=addressed,
        replies_to_bot=replies_to_bot,
        attachments=_attachments(message),
        sent_at=message.date.timestamp(),
        raw=update,
    )
