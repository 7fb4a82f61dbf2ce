"""Typed settings of the turn loop."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AgentSettings(BaseModel):
    """Bounds of one turn: how many model calls it may make and how much tool output the model sees."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_iterations: int = Field(default=12, ge=1, le=100)
    tool_output_chars: int = Field(default=16_000, ge=500)
