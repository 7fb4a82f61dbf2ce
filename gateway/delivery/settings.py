"""Typed settings of the delivery loop (the ``delivery`` config section)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

# Adapter options whose names say they hold a credential are kept as SecretStr: never printed, and
# collected by ``Settings.secret_values`` for log redaction.
_SECRET_OPTION = re.compile(r"(token|secret|password|api_key)s?$")


class ChatRate(BaseModel):
    """A per-chat token bucket shared by sends, edits and typing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_s: float = Field(default=1.0, gt=0)
    burst: int = Field(default=5, ge=1)


def _default_rates() -> dict[str, ChatRate]:
    # The embedded web chat has no platform rate limit; a browser is the only reader.
    return {"web": ChatRate(per_s=100.0, burst=100)}


class DeliverySettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_in_flight: int = Field(default=32, ge=1, description="Rows delivered at once (different chats).")
    max_attempts: int = Field(default=5, ge=1, description="Attempts per chunk before giving up visibly.")
    backoff_initial_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    claim_s: float = Field(
        default=60.0, gt=0, description="A dead deliverer's rows are re-claimed after this."
    )
    shutdown_grace_s: float = Field(default=5.0, ge=0, description="Time in-flight sends get at shutdown.")
    reply_grace_s: float = Field(
        default=10.0,
        gt=0,
        description="A reply to the web chat or the API waits this long for the process that took the "
        "message (where the browser or API caller waits for it); then any process delivers it.",
    )
    poll_min_s: float = Field(default=0.02, gt=0)
    poll_max_s: float = Field(default=0.5, gt=0)
    chat_rate: ChatRate = Field(default_factory=ChatRate)
    platform_rates: dict[str, ChatRate] = Field(default_factory=_default_rates)
    outbox_keep_days: float = Field(
        default=7.0,
        ge=0,
        description="Delivered outbox rows are deleted this long after delivery (0: keep them forever); "
        "undelivered rows are never deleted.",
    )
    outbox_prune_every_s: float = Field(default=600.0, gt=0, description="Time between pruning passes.")
    outbox_prune_batch: int = Field(default=500, ge=1, description="Rows deleted per write transaction.")

    def rate_for(self, platform: str) -> ChatRate:
        return self.platform_rates.get(platform, self.chat_rate)


DEFAULT_LEASE_S = 15.0
"""How long a polling or socket adapter's owner holds it unrenewed before another host may take it over."""


class AdapterSettings(BaseModel):
    """One platform adapter (``adapters.<name>``): enabled or not, plus the adapter's own options.

    ``enabled`` and ``streaming`` (progressive edits while a turn streams; only where the platform can
    edit) are the gateway's; every other option is the adapter's business and reaches its factory as a
    plain mapping (``gateway.adapters_config.adapter_options``). Credential-named options are SecretStr.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    enabled: bool = False
    streaming: bool = False
    streaming_interval_s: float = Field(default=1.0, gt=0, description="Least time between stream edits.")
    start_retry_initial_s: float = Field(
        default=1.0, gt=0, description="First wait before retrying a start that failed (platform away)."
    )
    start_retry_max_s: float = Field(default=60.0, gt=0, description="Longest wait between start retries.")
    restart_after_s: float = Field(
        default=300.0,
        ge=0,
        description="Restart the adapter after it reported itself disconnected this long (0: never).",
    )
    lease_s: float = Field(
        default=DEFAULT_LEASE_S,
        ge=1.0,
        description="A polling or socket adapter runs in one process at a time, under a lease this long: "
        "another process (any host) takes over within it when the owner dies, hangs or loses the database.",
    )

    @model_validator(mode="before")
    @classmethod
    def _hide_credentials(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {key: _hidden(value) if _SECRET_OPTION.search(key) else value for key, value in data.items()}

    def secret(self, option: str) -> SecretStr | None:
        """A credential option, None when unset or empty."""
        value = (self.model_extra or {}).get(option)
        if isinstance(value, SecretStr) and value.get_secret_value().strip():
            return value
        return None


def _hidden(value: Any) -> Any:
    """Strings as SecretStr, also inside a mapping of them (e.g. one token per workspace)."""
    if isinstance(value, str):
        return SecretStr(value)
    if isinstance(value, dict):
        return {key: _hidden(item) for key, item in value.items()}
    return value
