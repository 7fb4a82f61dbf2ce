"""DiscordSettings: the typed configuration of the Discord adapter, validated once at boot.

Invariants: the token is a ``SecretStr`` (never printed); an empty token is refused when the adapter is
built (``AdapterConfigError``); ``max_ratelimit_wait_s`` is at least 30 s because discord.py refuses less.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from gateway.contracts import AdapterConfigError


class DiscordSettings(BaseModel):
    """``adapters.discord`` in config.yaml (the token usually comes from ``DISCORD_BOT_TOKEN``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token: SecretStr
    auto_thread: bool = Field(
        default=False,
        description="open a thread for each top-level mention in a guild channel and answer there",
    )
    auto_thread_archive_minutes: Literal[60, 1440, 4320, 10080] = 1440
    free_response_channels: tuple[str, ...] = Field(
        default=(), description="channel or thread ids where every message is addressed to the bot"
    )
    max_ratelimit_wait_s: float = Field(
        default=30.0,
        ge=30.0,
        description="a 429 asking to wait longer than this is surfaced to delivery instead of slept on",
    )
    guild_ready_timeout_s: float = Field(default=2.0, gt=0.0)
    connect_timeout_s: float = Field(default=30.0, gt=0.0, description="how long start waits for READY")

    def checked(self) -> DiscordSettings:
        """Self, after the checks pydantic cannot express; raises ``AdapterConfigError``."""
        if not self.token.get_secret_value().strip():
            raise AdapterConfigError("discord is enabled but no bot token is set (DISCORD_BOT_TOKEN)")
        return self
