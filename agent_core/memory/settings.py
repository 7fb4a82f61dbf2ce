"""Typed configuration of the curated memory store (layout and character limits)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class MemorySettings(BaseModel):
    """Memory layout and limits; limits count characters of the joined file text, not tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    isolation: Literal["person", "shared"] = "person"
    memory_char_limit: int = Field(default=2200, gt=0)
    user_char_limit: int = Field(default=1375, gt=0)
    global_char_limit: int = Field(default=2200, gt=0)
