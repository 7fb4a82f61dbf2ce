"""Typed settings of reminders and scheduled turns (the ``schedules`` config section).

Invariant: ``default_timezone`` is a time zone this machine knows (checked at load, so a typo fails
``check-config``, not the first reminder).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gateway.zone_names import ZoneName

MissedPolicy = Literal["catch_up_once", "skip"]


class ScheduleSettings(BaseModel):
    """When and how scheduled runs fire, and how many schedules a person may keep."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(default=True, description="Run the scheduler in serve and worker processes.")
    default_timezone: ZoneName = Field(
        default="UTC", description="The time zone of people who never set theirs (/timezone)."
    )
    missed: MissedPolicy = Field(
        default="catch_up_once",
        description="Runs missed while nothing ran: fire the latest one once (catch_up_once) or skip them.",
    )
    missed_after_s: float = Field(
        default=60.0, gt=0, description="A run this much later than its time counts as missed."
    )
    max_per_person: int = Field(default=50, ge=1, description="Active and paused schedules per person.")
    min_interval_s: float = Field(
        default=60.0, gt=0, description="Least time between two runs of a repeating schedule."
    )
    max_text_chars: int = Field(default=4000, ge=1, description="Longest message or prompt.")
    poll_s: float = Field(
        default=1.0, gt=0, description="Longest wait between looks for due schedules (other hosts' too)."
    )
    batch: int = Field(default=200, ge=1, description="Schedules fired per write transaction.")
