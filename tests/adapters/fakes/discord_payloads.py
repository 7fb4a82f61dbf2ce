"""Discord payloads as the API and gateway send them (users, channels, threads, a guild) and their replay.

Invariants: every payload carries the keys discord.py indexes directly; snowflakes are strings; the
timestamps are one fixed instant (tests compare ids, never times).
"""

from __future__ import annotations

from typing import Any

import discord
import discord.http
import discord.state
from discord.utils import MISSING

Json = dict[str, Any]
TIMESTAMP = "2026-11-30T12:00:00.000000+00:00"


def user_payload(user_id: int, name: str, *, bot: bool = False) -> Json:
    return {"id": str(user_id), "username": name, "discriminator": "0", "global_name": name.title(),
            "avatar": None, "bot": bot, "flags": 0}  # fmt: skip


def bot_message_payload(bot: Json, message_id: int, channel_id: int, content: str) -> Json:
    """A message the bot sent, as the REST API answers it."""
    return {"id": str(message_id), "channel_id": str(channel_id), "author": bot, "content": content,
            "timestamp": TIMESTAMP, "edited_timestamp": None, "tts": False, "mention_everyone": False,
            "mentions": [], "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "type": 0,
            "flags": 0}  # fmt: skip


def text_channel_payload(guild_id: int, channel_id: int) -> Json:
    return {"id": str(channel_id), "type": 0, "name": "general", "position": 0, "guild_id": str(guild_id),
            "permission_overwrites": []}  # fmt: skip


def thread_payload(guild_id: int, channel_id: int, thread_id: int, name: str = "release planning") -> Json:
    """A public thread (type 11) of ``channel_id``, as Discord sends it (it needs its metadata)."""
    return {"id": str(thread_id), "type": 11, "parent_id": str(channel_id), "guild_id": str(guild_id),
            "name": name, "owner_id": "42", "message_count": 3, "member_count": 2,
            "thread_metadata": {"archived": False, "auto_archive_duration": 1440, "locked": False,
                                "archive_timestamp": TIMESTAMP}}  # fmt: skip


def guild_payload(guild_id: int, bot: Json, channel_id: int, thread_id: int) -> Json:
    """GUILD_CREATE data: @everyone, one text channel, one active public thread in it, the bot member."""
    everyone = {"id": str(guild_id), "name": "@everyone", "permissions": "68608", "position": 0, "color": 0,
                "hoist": False, "managed": False, "mentionable": False, "flags": 0}  # fmt: skip
    return {
        "id": str(guild_id), "name": "Book club", "owner_id": "42", "roles": [everyone], "member_count": 2,
        "channels": [text_channel_payload(guild_id, channel_id)],
        "threads": [thread_payload(guild_id, channel_id, thread_id)],
        "members": [{"user": bot, "roles": [], "joined_at": TIMESTAMP, "deaf": False, "mute": False,
                     "flags": 0}],
        "emojis": [], "stickers": [], "voice_states": [], "presences": [], "stage_instances": [],
        "guild_scheduled_events": [], "soundboard_sounds": [], "large": False, "unavailable": False,
    }  # fmt: skip


def replay_message(payload: Json) -> discord.Message:
    """What discord.py's gateway state makes of a recorded ``{bot, guild?, message}`` payload, offline."""
    received: list[discord.Message] = []

    def dispatch(event: str, *args: object) -> None:
        if event == "message" and isinstance(args[0], discord.Message):
            received.append(args[0])

    state = discord.state.ConnectionState(
        dispatch=dispatch, handlers={}, hooks={}, http=discord.http.HTTPClient(MISSING),
        intents=discord.Intents.default(),
    )  # fmt: skip
    state.user = discord.ClientUser(state=state, data=payload["bot"])
    if payload.get("guild"):
        state.parse_guild_create(payload["guild"])
    state.parse_message_create(payload["message"])
    [message] = received
    return message
