"""Translation of a discord.py ``Message`` into an ``InboundMessage``; pure.

Invariants: ``event_id`` is the message id (what the inbound ledger dedupes on; Discord re-sends the same
id on a gateway replay); a DM is a DM chat, a guild text channel a GROUP chat with ``workspace`` = guild
id, a thread a THREAD chat whose ``chat_id`` is its parent channel and ``thread_id`` the thread itself;
``mentions_bot`` means "addressed to the bot": always in a DM, in a guild on a user mention of the bot or
in a configured free-response channel; ``replies_to_bot`` on a reply to the bot's message or anywhere in a
thread the bot opened (its auto-threads); the bot's own and other bots' messages, system messages and
empty messages yield ``None``. The bot's mention token is removed from the text; other user mentions
read as ``@name``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import discord

from gateway.contracts import Attachment, ChatKind, ChatRef, InboundMessage, UserRef

PLATFORM = "discord"
_HANDLED_TYPES = (discord.MessageType.default, discord.MessageType.reply)
_USER_MENTION = re.compile(r"<@!?(\d+)>")


@dataclass(frozen=True)
class BotIdentity:
    """Who the bot is, learned at login."""

    user_id: int
    name: str | None = None


def chat_ref(channel: object, guild_id: int | None, auto_thread_id: int | None = None) -> ChatRef:
    """Where a message was said; ``auto_thread_id`` is the thread the adapter opened for it, if any."""
    workspace = str(guild_id) if guild_id is not None else None
    if isinstance(channel, discord.Thread):
        parent = channel.parent_id
        return ChatRef(PLATFORM, str(parent), ChatKind.THREAD, workspace, str(channel.id), channel.name)
    channel_id = str(getattr(channel, "id", ""))
    title = getattr(channel, "name", None)
    if guild_id is None:
        return ChatRef(PLATFORM, channel_id, ChatKind.DM)
    if auto_thread_id is not None:
        return ChatRef(PLATFORM, channel_id, ChatKind.THREAD, workspace, str(auto_thread_id), title)
    return ChatRef(PLATFORM, channel_id, ChatKind.GROUP, workspace, title=title)


def _text(message: discord.Message, bot: BotIdentity) -> str:
    names = {user.id: user.display_name for user in message.mentions}

    def replace(match: re.Match[str]) -> str:
        user_id = int(match.group(1))
        if user_id == bot.user_id:
            return ""
        name = names.get(user_id)
        return f"@{name}" if name else match.group(0)

    return re.sub(r"[ \t]{2,}", " ", _USER_MENTION.sub(replace, message.content)).strip()


def _attachments(message: discord.Message) -> tuple[Attachment, ...]:
    found: list[Attachment] = []
    for item in message.attachments:
        mime = item.content_type
        kind = (
            "image" if mime and mime.startswith("image/") else "audio" if item.is_voice_message() else "file"
        )
        found.append(Attachment(kind, name=item.filename, mime_type=mime, size=item.size))
    found += [Attachment("sticker", name=sticker.name) for sticker in message.stickers]
    return tuple(found)


def _reply_target(message: discord.Message) -> tuple[str | None, int | None]:
    """The replied-to message id and its author (when Discord sent the referenced message along)."""
    reference = message.reference
    if reference is None or reference.message_id is None:
        return None, None
    resolved = reference.resolved
    author_id = resolved.author.id if isinstance(resolved, discord.Message) else None
    return str(reference.message_id), author_id


def message_to_inbound(
    message: discord.Message,
    bot: BotIdentity,
    free_response_channels: frozenset[str] = frozenset(),
    auto_thread_id: int | None = None,
) -> InboundMessage | None:
    """The ``InboundMessage`` for ``message``, or ``None`` when it is not a user's message for the bot."""
    author = message.author
    if author.bot or author.id == bot.user_id or message.type not in _HANDLED_TYPES:
        return None
    guild_id = message.guild.id if message.guild else getattr(message.channel, "guild_id", None)
    chat = chat_ref(message.channel, guild_id, auto_thread_id)
    text = _text(message, bot)
    attachments = _attachments(message)
    if not text and not attachments:
        return None
    reply_to, replied_author = _reply_target(message)
    mentioned = any(user.id == bot.user_id for user in message.mentions)
    in_free = chat.chat_id in free_response_channels or (chat.thread_id or "") in free_response_channels
    return InboundMessage(
        event_id=str(message.id),
        chat=chat,
        sender=UserRef(PLATFORM, str(author.id), display_name=author.display_name, is_bot=author.bot),
        text=text,
        message_id=str(message.id),
        reply_to_message_id=reply_to,
        mentions_bot=chat.kind == ChatKind.DM or mentioned or in_free,
        replies_to_bot=replied_author == bot.user_id or _in_own_thread(message, bot),
        attachments=attachments,
        sent_at=message.created_at.timestamp(),
        raw=message,
    )


def _in_own_thread(message: discord.Message, bot: BotIdentity) -> bool:
    """Said in a thread the bot opened (an auto-thread): it takes part there, no mention needed."""
    channel = message.channel
    return isinstance(channel, discord.Thread) and channel.owner_id == bot.user_id
