"""Typed configuration of context compression: when it fires, what it keeps, how its model calls are bounded.

Invariants: the threshold is a fraction of the model's context window; the tail's token budget is a
fraction of the threshold (so both move together when the window changes, fixing the anchor's
auto-lowered threshold that kept a stale tail budget); every model call compression makes has a token
cap and a timeout.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CompressionSettings(BaseModel):
    """When to compress, what survives verbatim, and the bounds of the flush and summary calls."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(default=True, description="Automatic compression; /compress works regardless.")
    threshold: float = Field(default=0.50, gt=0.0, le=0.95, description="Fraction of the context window.")
    tail_ratio: float = Field(
        default=0.20, ge=0.05, le=0.80, description="Tail token budget as a fraction of the threshold."
    )
    protect_first_n: int = Field(
        default=3, ge=0, le=50, description="Head messages kept verbatim, on the first compression only."
    )
    min_tail_messages: int = Field(default=6, ge=1, le=200)
    cooldown_seconds: float = Field(
        default=300.0, ge=0.0, description="After a failed or ineffective attempt, wait at least this long…"
    )
    cooldown_turns: int = Field(default=2, ge=0, description="…and at least this many new user turns.")
    max_attempts_per_turn: int = Field(default=2, ge=1, le=10)
    flush_enabled: bool = True
    flush_max_tokens: int = Field(default=1024, ge=64)
    flush_timeout_s: float = Field(default=60.0, gt=0.0)
    flush_max_tool_calls: int = Field(default=8, ge=1, le=50)
    summary_max_tokens: int = Field(default=2048, ge=128)
    summary_timeout_s: float = Field(default=120.0, gt=0.0)
    summary_message_chars: int = Field(
        default=6_000, ge=500, description="Per-message cap of the transcript shown to the summariser."
    )
    fallback_max_chars: int = Field(default=8_000, ge=1_000)
    long_tool_output_chars: int = Field(
        default=1_500, ge=200, description="Older tool outputs longer than this become a one-line note."
    )
    duplicate_min_chars: int = Field(
        default=200, ge=1, description="Older tool outputs at least this long are collapsed when repeated."
    )
    hook_timeout_s: float = Field(default=10.0, gt=0.0)
    provider_context_chars: int = Field(default=6_000, ge=0)

    def threshold_tokens(self, context_window: int) -> int:
        """Prompt tokens at which compression fires for a model with ``context_window`` tokens."""
        return max(1, int(context_window * self.threshold))

    def tail_budget_tokens(self, context_window: int) -> int:
        """How many tokens of recent conversation the tail keeps verbatim (beyond its required messages)."""
        return max(1, int(self.threshold_tokens(context_window) * self.tail_ratio))
