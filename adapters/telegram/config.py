"""TelegramSettings: the typed configuration of the Telegram adapter, validated once at boot.

Invariants: the token and webhook secret are ``SecretStr`` (never printed); webhook mode without a secret
is refused when the adapter is built (``AdapterConfigError``), because an unauthenticated webhook lets
anyone on the internet speak as any Telegram user.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from gateway.contracts import AdapterConfigError

_SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


class TelegramSettings(BaseModel):
    """``adapters.telegram`` in config.yaml (the token usually comes from ``TELEGRAM_BOT_TOKEN``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token: SecretStr
    mode: Literal["polling", "webhook"] = "polling"
    webhook_secret: SecretStr | None = None
    webhook_path: str = "/webhooks/telegram"
    webhook_url: str | None = Field(
        default=None,
        description="public URL set with setWebhook at start; None = registered elsewhere",
    )
    free_response_chats: tuple[str, ...] = Field(
        default=(), description="group chat ids where every message is addressed to the bot"
    )
    bot_username: str | None = Field(default=None, description="without '@'; None = learned from getMe")
    api_base_url: str = "https://api.telegram.org/bot"
    file_base_url: str = "https://api.telegram.org/file/bot"
    poll_timeout_s: int = Field(default=30, ge=0, le=50)
    poll_interval_s: float = Field(default=0.0, ge=0.0)
    request_timeout_s: float = Field(default=20.0, gt=0.0)
    stop_grace_s: float = Field(
        default=5.0, gt=0.0, description="how long stop waits for fetched updates to be accepted"
    )

    def checked(self) -> TelegramSettings:
        """Self, after the checks that need more than one field; raises ``AdapterConfigError``."""
        if not self.token.get_secret_value().strip():
            raise AdapterConfigError("telegram is enabled but no bot token is set (TELEGRAM_BOT_TOKEN)")
        if self.mode == "webhook":
            secret = self.webhook_secret.get_secret_value() if self.webhook_secret else ""
            if not secret:
                raise AdapterConfigError("telegram webhook mode requires a webhook secret (webhook_secret)")
            if not _SECRET_TOKEN.match(secret):
                raise AdapterConfigError(
                    "telegram webhook secret must be 1-256 of the characters A-Z a-z 0-9 _ -"
                )
            if not self.webhook_path.startswith("/"):
                raise AdapterConfigError("telegram webhook_path must start with '/'")
        return self
