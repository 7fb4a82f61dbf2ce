"""Typed configuration of /link codes (config key ``access.link``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LinkSettings(BaseModel):
    """How long a /link code lives, how long it is, and how many a person may ask for per hour."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ttl_s: float = Field(default=600.0, gt=0)
    code_length: int = Field(default=8, ge=6, le=8)
    codes_per_hour: int = Field(default=5, ge=1)
