"""Typed settings of the inbound side: per-platform conversation scope and reset policy (``sessions``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class PlatformSessions(BaseModel):
    """How one platform's chats map to conversations, and when a quiet conversation ends by itself.

    DESIGN §3 defaults: a DM is one conversation per chat; a plain group one per user; a thread or forum
    topic one shared conversation. ``reset: idle`` ends a conversation after ``idle_minutes`` of silence.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    group: Literal["per_user", "shared"] = "per_user"
    thread: Literal["shared", "per_user"] = "shared"
    reset: Literal["none", "idle"] = "none"
    idle_minutes: float = Field(default=1440.0, gt=0)


class SessionSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    default: PlatformSessions = Field(default_factory=PlatformSessions)
    platforms: dict[str, PlatformSessions] = Field(default_factory=dict)

    def for_platform(self, platform: str) -> PlatformSessions:
        return self.platforms.get(platform, self.default)

    def idle_after_s(self, platform: str) -> float | None:
        policy = self.for_platform(platform)
        return policy.idle_minutes * 60.0 if policy.reset == "idle" else None
