"""Typed configuration of the system prompt builder (workspace for context files, size cap, SOUL file)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class PromptSettings(BaseModel):
    """Where project context comes from and how much of it may enter the prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # None = no project context tier at all.
    workspace: Path | None = None
    context_char_limit: int = Field(default=20_000, ge=1_000)
    soul_file: str = Field(default="SOUL.md", pattern=r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
