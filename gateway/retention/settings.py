"""Typed settings of retention (the ``retention`` config section): how long each kind of row is kept.

Invariants: every age is in days, ``0`` keeps that kind forever; retention is on by default with generous
ages (a conversation nobody wrote in for a year ends, and is deleted 30 days later); the tool-output
threshold is above the stub floor, so a stub is never stubbed again.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_core.storage.tool_output_stubs import TOOL_OUTPUT_FLOOR_CHARS


class RetentionSettings(BaseModel):
    """What retention removes, after how long, how often it runs, and when SQLite hands space back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(default=True, description="serve runs retention in the background every every_s.")
    every_s: float = Field(default=3600.0, gt=0, description="Time between retention runs (any host's).")
    conversations_days: float = Field(
        default=365.0,
        ge=0,
        description="A conversation nobody wrote in for this long is ended (reason retention); 0 keeps "
        "every conversation forever.",
    )
    conversations_grace_days: float = Field(
        default=30.0,
        ge=0,
        description="A conversation retention ended is deleted (messages, search entries) this long after it "
        "ended; one ended otherwise (/new, reset, idle) conversations_days + this after it ended.",
    )
    tool_outputs_days: float = Field(
        default=90.0, ge=0, description="Long tool outputs older than this are replaced by a short stub."
    )
    tool_output_min_chars: int = Field(
        default=4_000,
        ge=TOOL_OUTPUT_FLOOR_CHARS,
        description="Only tool outputs longer than this are stubbed.",
    )
    ledger_days: float = Field(
        default=30.0,
        ge=0,
        description="Inbound ledger rows (which platform events were taken) are kept this long: the dedupe "
        "window. Platforms re-deliver within minutes to a day; keep at least 1.",
    )
    jobs_days: float = Field(default=30.0, ge=0, description="Finished turn jobs (done or failed).")
    given_up_replies_days: float = Field(
        default=90.0,
        ge=0,
        description="Replies delivery gave up on (the admin console can send them again until then).",
    )
    schedule_runs_days: float = Field(
        default=90.0, ge=0, description="Fired runs of schedules (each schedule's latest run is kept)."
    )
    batch: int = Field(default=500, ge=1, description="Rows removed per write transaction.")
    max_batches: int = Field(
        default=200, ge=1, description="Batches per kind in one run (the rest: next run)."
    )
    lease_s: float = Field(
        default=300.0,
        gt=0,
        description="A run's lease (renewed between batches): how long a dead runner blocks.",
    )
    vacuum_free_fraction: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="SQLite: hand free pages back to the file system when more than this part of state.db "
        "is free.",
    )
    vacuum_step_mb: float = Field(
        default=8.0, gt=0, description="SQLite: most space handed back per write transaction."
    )
