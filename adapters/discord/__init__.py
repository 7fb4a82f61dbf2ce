"""The Discord adapter (discord.py 2.7): gateway websocket with message content, Discord markdown out."""

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from adapters.discord.adapter import DISCORD_CAPABILITIES, DiscordAdapter
from adapters.discord.config import DiscordSettings
from adapters.discord.convert import BotIdentity, message_to_inbound
from adapters.discord.gateway_client import gateway_intents
from adapters.discord.render import DISCORD_LIMIT, DiscordMarkdown, render_discord


def create_adapter(settings: DiscordSettings | BaseModel | Mapping[str, Any]) -> DiscordAdapter:
    """Entry point ``mnemogate.adapters: discord``; takes our settings, ``AdapterSettings`` or a mapping."""
    if isinstance(settings, DiscordSettings):
        return DiscordAdapter(settings)
    # The gateway's own fields (enabled, streaming, ...) are not ours; our options are its extras.
    options = dict(settings.model_extra or {}) if isinstance(settings, BaseModel) else dict(settings)
    options.pop("enabled", None)
    return DiscordAdapter(DiscordSettings.model_validate(options))


__all__ = [
    "DISCORD_CAPABILITIES",
    "DISCORD_LIMIT",
    "BotIdentity",
    "DiscordAdapter",
    "DiscordMarkdown",
    "DiscordSettings",
    "create_adapter",
    "gateway_intents",
    "message_to_inbound",
    "render_discord",
]
