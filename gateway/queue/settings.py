"""Typed settings of the turn queue and the worker pool (the ``queue`` config section)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BusyPolicyName = Literal["queue", "interrupt"]


class QueueSettings(BaseModel):
    """How many turns run at once, how leases behave, and what a message sent mid-turn does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    concurrency: int = Field(default=4, ge=1, le=256, description="Turns one process runs at once.")
    lease_s: float = Field(default=15.0, gt=0, description="A dead worker's job is re-claimed after this.")
    busy_policy: BusyPolicyName = "queue"
    drain_grace_s: float = Field(default=10.0, ge=0, description="SIGTERM: time in-flight turns get.")
    max_attempts: int = Field(default=3, ge=1, description="Claims of one job before it fails visibly.")
    poll_min_s: float = Field(default=0.02, gt=0)
    poll_max_s: float = Field(default=0.5, gt=0)
    interrupt_check_s: float = Field(default=0.1, gt=0, description="How often a turn reads /stop flags.")
