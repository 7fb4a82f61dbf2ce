"""SlackSettings: the typed configuration of the Slack adapter, validated once at boot.

Invariants: every credential is a ``SecretStr`` (never printed); HTTP (Events API) mode without a signing
secret and Socket Mode without an app token are refused when the adapter is built (``AdapterConfigError``),
because an unverified events endpoint lets anyone speak as any Slack user.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from gateway.contracts import AdapterConfigError


class SlackSettings(BaseModel):
    """``adapters.slack`` in config.yaml (credentials usually from ``SLACK_BOT_TOKEN``, ``SLACK_APP_TOKEN``,
    ``SLACK_SIGNING_SECRET``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bot_token: SecretStr
    mode: Literal["http", "socket"] = "http"
    signing_secret: SecretStr | None = None
    app_token: SecretStr | None = Field(default=None, description="xapp- token, Socket Mode only")
    events_path: str = "/webhooks/slack/events"
    api_base_url: str = "https://slack.com/api/"
    reply_in_thread: bool = Field(
        default=True, description="answer a top-level channel mention in a new thread under it"
    )
    team_tokens: dict[str, SecretStr] = Field(
        default_factory=dict, description="team id -> bot token for further workspaces (sends and edits)"
    )
    request_timeout_s: int = Field(default=30, gt=0)
    thread_memory_days: int = Field(
        default=30,
        gt=0,
        description="a plain reply in a thread the bot took part in is answered while the thread was active "
        "within this many days (remembered across restarts)",
    )

    def checked(self) -> SlackSettings:
        """Self, after the checks that need more than one field; raises ``AdapterConfigError``."""
        if not self.bot_token.get_secret_value().strip():
            raise AdapterConfigError("slack is enabled but no bot token is set (SLACK_BOT_TOKEN)")
        if self.mode == "http":
            if not (self.signing_secret and self.signing_secret.get_secret_value()):
                raise AdapterConfigError(
                    "slack Events API mode requires the signing secret (SLACK_SIGNING_SECRET)"
                )
            if not self.events_path.startswith("/"):
                raise AdapterConfigError("slack events_path must start with '/'")
        if self.mode == "socket" and not (self.app_token and self.app_token.get_secret_value()):
            raise AdapterConfigError("slack Socket Mode requires an app-level token (SLACK_APP_TOKEN)")
        if not self.api_base_url.endswith("/"):
            # slack_sdk joins method names with urljoin: without the slash '/api' would be dropped.
            raise AdapterConfigError("slack api_base_url must end with '/'")
        return self
