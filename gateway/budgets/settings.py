"""Typed settings of spend budgets (the ``budgets`` config section).

Invariants: every limit is positive or absent (absent: no limit of that kind); ``timezone`` is a zone this
machine knows, checked at load so a typo fails ``check-config``; with no limit anywhere budgets are off and
no turn pays for a budget read. A person entry in ``persons`` overrides the per-person limits field by field
and decides that person's exemption (``exempt: true`` or ``false``); without one, admins are exempt when
``exempt_admins`` is true (the default).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gateway.zone_names import ZoneName


class Limits(BaseModel):
    """Per-period caps of one budget scope, in US dollars and/or tokens (input, output, cache read/write)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    day_usd: float | None = Field(default=None, gt=0)
    month_usd: float | None = Field(default=None, gt=0)
    day_tokens: int | None = Field(default=None, gt=0)
    month_tokens: int | None = Field(default=None, gt=0)

    @property
    def empty(self) -> bool:
        return all(v is None for v in (self.day_usd, self.month_usd, self.day_tokens, self.month_tokens))

    def merged(self, override: Limits) -> Limits:
        """These limits with every limit ``override`` sets replaced by its value."""
        return Limits(**{**self.limits().model_dump(), **override.limits().model_dump(exclude_none=True)})

    def limits(self) -> Limits:
        """The four caps alone (a person entry without its exemption)."""
        return Limits(
            day_usd=self.day_usd,
            month_usd=self.month_usd,
            day_tokens=self.day_tokens,
            month_tokens=self.month_tokens,
        )


class PersonBudget(Limits):
    """One person's override: their own limits (fields not set keep the per-person default) or exemption."""

    exempt: bool | None = Field(
        default=None, description="True: never refused; False: limited even as admin."
    )


class BudgetSettings(BaseModel):
    """Who may spend how much per day and month before turns are refused, and how the guard estimates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timezone: ZoneName = Field(default="UTC", description="Days and months start at midnight in this zone.")
    person: Limits = Field(default_factory=Limits, description="Every person's limits (unless overridden).")
    platform: dict[str, Limits] = Field(
        default_factory=dict, description="Limits of all turns on one platform (telegram, web, …)."
    )
    overall: Limits = Field(default_factory=Limits, description="Limits of the whole deployment.")
    persons: dict[str, PersonBudget] = Field(
        default_factory=dict, description="Overrides and exemptions by person id."
    )
    exempt_admins: bool = Field(default=True, description="Admins are never refused (unless in persons).")
    turn_estimate_usd: float | None = Field(
        default=None,
        ge=0,
        description="Least cost a turn is assumed to have near a limit (the largest recent turn if higher).",
    )
    turn_estimate_tokens: int | None = Field(
        default=None, ge=0, description="Least tokens one turn is assumed to use near a limit."
    )

    @property
    def enabled(self) -> bool:
        """Whether any limit is set anywhere (otherwise budgets cost nothing at claim time)."""
        return not (
            self.person.empty
            and self.overall.empty
            and all(limits.empty for limits in self.platform.values())
            and all(entry.empty for entry in self.persons.values())
        )
