"""Typed configuration of who may talk to the bot (``access``) and how fast (``rate_limit``).

Invariants: every platform has a resolved mode — "open" for ``web`` (bound to loopback by default) and
``api`` (the OpenAI-compatible endpoint, behind the admin bearer token), "allowlist" for every other
platform unless configured; per-platform keys are validated as
``PlatformAccess`` (unknown keys inside a platform are errors); admins are ``platform:user_id`` strings.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gateway.identity.settings import LinkSettings

OPEN_BY_DEFAULT = frozenset({"web", "api"})
_PLATFORM_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")

AccessMode = Literal["open", "allowlist"]


def _as_id_list(value: object) -> object:
    """YAML gives numeric ids as ints, env vars one string (JSON or comma-separated): all become strings."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return value
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, int | float):
        return [str(value)]
    if isinstance(value, list | tuple):
        return [str(item) if isinstance(item, int) else item for item in value]
    return value


class PlatformAccess(BaseModel):
    """One platform's policy: ``access.<platform>.{mode, allow, pairing}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: AccessMode | None = None  # None: the platform's default (see OPEN_BY_DEFAULT)
    allow: tuple[str, ...] = ()  # user ids on that platform; "*" allows everyone
    pairing: bool = False  # unknown users in a DM get a pairing code an admin can approve

    @field_validator("allow", mode="before")
    @classmethod
    def _ids_as_text(cls, value: object) -> object:
        return _as_id_list(value)


class ResolvedAccess(BaseModel):
    """A platform's policy with its default mode filled in."""

    model_config = ConfigDict(frozen=True)

    platform: str
    mode: AccessMode
    allow: frozenset[str]
    pairing: bool

    def allows(self, user_id: str) -> bool:
        """True when the platform is open or the user is on its allowlist."""
        return self.mode == "open" or "*" in self.allow or user_id in self.allow


class AccessSettings(BaseModel):
    """``access``: admins, notices, link codes, pairing budget, and one ``PlatformAccess`` per platform."""

    model_config = ConfigDict(frozen=True, extra="allow")

    # Every key not declared below names a platform, validated as PlatformAccess.
    __pydantic_extra__: dict[str, PlatformAccess] = Field(init=False)

    admins: tuple[str, ...] = ()  # "telegram:123": always admitted, Actor.is_admin on that account
    denied_notice: bool = True  # False: unknown users get silence instead of one "not allowed" notice
    notice_interval_s: float = Field(default=86400.0, gt=0)  # at most one notice of a kind per account
    pairing_codes_per_hour: int = Field(default=5, ge=1)  # new pairing codes per platform per hour
    link: LinkSettings = Field(default_factory=LinkSettings)

    @field_validator("admins", mode="before")
    @classmethod
    def _admins_as_text(cls, value: object) -> object:
        return _as_id_list(value)

    @field_validator("admins")
    @classmethod
    def _admins_name_platform(cls, admins: tuple[str, ...]) -> tuple[str, ...]:
        for admin in admins:
            platform, sep, user_id = admin.partition(":")
            if not sep or not platform or not user_id:
                raise ValueError(f"admin {admin!r} must be written platform:user_id, e.g. telegram:12345")
        return admins

    @model_validator(mode="after")
    def _platform_names(self) -> AccessSettings:
        for name in self.model_extra or {}:
            if not _PLATFORM_NAME.fullmatch(name):
                raise ValueError(f"access.{name}: not a platform name (lower-case letters, digits, _)")
        return self

    def platforms(self) -> dict[str, PlatformAccess]:
        """The per-platform sections present in config."""
        return dict(self.model_extra or {})

    def for_platform(self, platform: str) -> ResolvedAccess:
        """The policy of ``platform``, defaults included."""
        configured = (self.model_extra or {}).get(platform) or PlatformAccess()
        default: AccessMode = "open" if platform in OPEN_BY_DEFAULT else "allowlist"
        return ResolvedAccess(
            platform=platform,
            mode=configured.mode or default,
            allow=frozenset(configured.allow),
            pairing=configured.pairing,
        )


class TokenBucketSettings(BaseModel):
    """A token bucket per key: ``capacity`` at once, then one more per ``refill_s``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    capacity: int = Field(default=10, ge=1)
    refill_s: float = Field(default=6.0, gt=0)


class NewPersonsSettings(TokenBucketSettings):
    """``rate_limit.new_web_persons``: web chat persons one client address may create (new browsers)."""

    capacity: int = Field(default=20, ge=1)
    refill_s: float = Field(default=60.0, gt=0)


class RateLimitSettings(TokenBucketSettings):
    """``rate_limit``: a token bucket per person: ``capacity`` messages at once, then one per ``refill_s``;
    and ``new_web_persons``, a bucket per client address for browsers the gateway has not seen before.
    ``enabled: false`` turns off both."""

    new_web_persons: NewPersonsSettings = Field(default_factory=NewPersonsSettings)

    def new_persons_budget(self) -> NewPersonsSettings:
        """The per-address budget in force: off whenever rate limiting as a whole is off."""
        if self.enabled:
            return self.new_web_persons
        return self.new_web_persons.model_copy(update={"enabled": False})
