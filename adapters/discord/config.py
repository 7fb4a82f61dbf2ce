"""DiscordSettings: the typed configuration of the Discord adapter, validated once at boot.

Invariants: the token is a ``SecretStr`` (never printed); an empty token is refused when the adapter is
built (``AdapterConfigError``); ``max_ratelimit_wait_s`` is at least 30 s because discord.py refuses less;
``catch_up_limit`` 0 turns the catch-up after a restart off.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from adapters.discord.endpoints import DISCORD_API, DISCORD_GATEWAY
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
    catch_up_limit: int = Field(
        default=200,
        ge=0,
        description="after a restart, at most this many missed messages are fetched per channel (0: off)",
    )
    api_base_url: str = Field(default=DISCORD_API, description="the REST API root (a proxy, or a test fake)")
    gateway_url: str = Field(default=DISCORD_GATEWAY, description="the first gateway websocket URL")

    @property
    def custom_endpoints(self) -> bool:
        return (self.api_base_url, self.gateway_url) != (DISCORD_API, DISCORD_GATEWAY)

    def checked(self) -> DiscordSettings:
        """Self, after the checks pydantic cannot express; raises ``AdapterConfigError``."""
        if not self.token.get_secret_value().strip():
            raise AdapterConfigError("discord is enabled but no bot token is set (DISCORD_BOT_TOKEN)")
        return self
