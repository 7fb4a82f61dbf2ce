"""Typed settings of the delivery loop (the ``delivery`` config section)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
    poll_min_s: float = Field(default=0.02, gt=0)
    poll_max_s: float = Field(default=0.5, gt=0)
    chat_rate: ChatRate = Field(default_factory=ChatRate)
    platform_rates: dict[str, ChatRate] = Field(default_factory=_default_rates)

    def rate_for(self, platform: str) -> ChatRate:
        return self.platform_rates.get(platform, self.chat_rate)


class AdapterSettings(BaseModel):
    """One platform adapter (``adapters.<name>``): enabled or not, plus the adapter's own options.

    Options other than ``enabled`` are the adapter's business; its factory receives this object whole.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    enabled: bool = False
