"""The budget policy alone: which limits bind whom, periods in the budgets' time zone, and the decision
(refuse at the limit, wait near it while turns are in flight, admit otherwise)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from agent_core.actor import Actor
from gateway.budgets import BudgetPolicy, BudgetSettings, Limits, PeriodClock, PersonBudget
from gateway.config import Settings
from gateway.startup_notes import startup_notes
from gateway.storage.budgets import BudgetScope, ScopeKind, ScopeReading, Spend, Verdict

ADA = Actor("p-ada", "c1", platform="telegram")
ADMIN = Actor("p-root", "c2", is_admin=True, platform="telegram")
PERSON = BudgetScope(ScopeKind.PERSON, "p-ada")
OVERALL = BudgetScope(ScopeKind.OVERALL)


def at(text: str, zone: str = "UTC") -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp()


def policy(**settings: object) -> BudgetPolicy:
    return BudgetPolicy(BudgetSettings.model_validate(settings))


def reading(
    scope: BudgetScope, *, day_usd: float = 0.0, in_flight: int = 0, turn_usd: float | None = None
) -> ScopeReading:
    return ScopeReading(scope, Spend(day_usd=day_usd, month_usd=day_usd), in_flight, turn_usd)


# -- periods ------------------------------------------------------------------------------------------


def test_a_day_starts_at_local_midnight_not_utc_midnight() -> None:
    clock = PeriodClock("Europe/Berlin")
    # 23:30 UTC on 5 Dec is already 00:30 on 6 Dec in Berlin: a new day there.
    now = at("2026-12-05T23:30:00")
    assert clock.day_start(now) == at("2026-12-06T00:00:00", "Europe/Berlin")
    assert clock.day_end(now) == at("2026-12-07T00:00:00", "Europe/Berlin")
    assert PeriodClock("UTC").day_start(now) == at("2026-12-05T00:00:00")


def test_a_month_rolls_over_at_the_first_in_the_zone_and_across_the_year() -> None:
    clock = PeriodClock("America/New_York")
    now = at("2026-12-31T23:59:00", "America/New_York")
    assert clock.month_start(now) == at("2026-12-01T00:00:00", "America/New_York")
    assert clock.month_end(now) == at("2027-01-01T00:00:00", "America/New_York")
    following = clock.month_end(now) + 1
    assert clock.month_start(following) == at("2027-01-01T00:00:00", "America/New_York")


def test_a_dst_change_makes_a_short_day_not_a_shifted_boundary() -> None:
    clock = PeriodClock("Europe/Berlin")
    now = at("2026-03-29T12:00:00", "Europe/Berlin")  # clocks went forward at 02:00
    assert clock.day_end(now) - clock.day_start(now) == 23 * 3600
    assert datetime.fromtimestamp(clock.day_start(now), UTC).hour == 23  # midnight CET = 23:00 UTC


# -- who is limited -----------------------------------------------------------------------------------


def test_no_limit_anywhere_means_budgets_are_off() -> None:
    off = policy()
    assert not off.enabled
    assert off.scopes(ADA) == ()


def test_a_person_is_bound_by_their_own_their_platforms_and_the_overall_limits() -> None:
    limited = policy(
        person={"day_usd": 1}, platform={"telegram": {"month_usd": 50}}, overall={"month_tokens": 10**6}
    )
    assert [s.key for s in limited.scopes(ADA)] == ["overall", "platform:telegram", "person:p-ada"]
    assert [s.key for s in limited.scopes(Actor("p-bo", "c", platform="web"))] == ["overall", "person:p-bo"]


def test_admins_are_exempt_by_default_unless_configured_otherwise() -> None:
    assert policy(person={"day_usd": 1}).scopes(ADMIN) == ()
    assert policy(person={"day_usd": 1}, exempt_admins=False).scopes(ADMIN) != ()
    limited_admin = policy(person={"day_usd": 1}, persons={"p-root": {"exempt": False, "day_usd": 10}})
    (scope,) = limited_admin.scopes(ADMIN)
    assert limited_admin.limits(scope).day_usd == 10


def test_a_person_can_be_exempted_or_given_their_own_limits() -> None:
    limited = policy(
        person={"day_usd": 1, "month_usd": 20}, persons={"p-ada": {"day_usd": 5}, "p-vip": {"exempt": True}}
    )
    assert limited.limits(PERSON) == Limits(day_usd=5, month_usd=20)
    assert limited.scopes(Actor("p-vip", "c", platform="telegram")) == ()
    assert limited.limits(BudgetScope(ScopeKind.PERSON, "p-bo")) == Limits(day_usd=1, month_usd=20)


def test_settings_refuse_nonsense() -> None:
    with pytest.raises(ValidationError):
        BudgetSettings.model_validate({"timezone": "Mars/Olympus"})
    with pytest.raises(ValidationError):
        BudgetSettings.model_validate({"person": {"day_usd": 0}})
    with pytest.raises(ValidationError):
        BudgetSettings.model_validate({"person": {"daily_usd": 1}})
    assert BudgetSettings(persons={"p": PersonBudget(day_tokens=5)}).enabled


# -- the decision -------------------------------------------------------------------------------------


def test_a_reached_limit_refuses_and_says_when_it_resets() -> None:
    limited = policy(person={"day_usd": 2}, timezone="Europe/Berlin")
    now = at("2026-12-05T15:00:00", "Europe/Berlin")
    decision = limited.decide(ADA, [reading(PERSON, day_usd=2.0)], now)
    assert decision.verdict is Verdict.REFUSE and decision.refusal is not None
    assert decision.refusal.limit == "day_usd"
    assert decision.refusal.resets_at == at("2026-12-06T00:00:00", "Europe/Berlin")
    assert decision.refusal.period_start == at("2026-12-05T00:00:00", "Europe/Berlin")
    assert "daily budget ($2.00)" in decision.refusal.text
    assert "Sun 6 Dec 2026, 00:00 Europe/Berlin" in decision.refusal.text


def test_when_day_and_month_are_both_reached_the_later_reset_is_named() -> None:
    limited = policy(person={"day_usd": 1, "month_usd": 1})
    decision = limited.decide(ADA, [reading(PERSON, day_usd=1.5)], at("2026-12-05T10:00:00"))
    assert decision.refusal is not None and decision.refusal.limit == "month_usd"
    assert decision.refusal.resets_at == at("2027-01-01T00:00:00")


def test_token_limits_count_tokens() -> None:
    limited = policy(overall={"day_tokens": 1000})
    spent = ScopeReading(OVERALL, Spend(day_tokens=1000, month_tokens=1000), 0)
    decision = limited.decide(ADA, [spent], at("2026-12-05T10:00:00"))
    assert decision.refusal is not None and "1,000 tokens" in decision.refusal.text
    assert "this bot's daily budget" in decision.refusal.text


def test_far_from_the_limit_turns_run_side_by_side() -> None:
    limited = policy(person={"day_usd": 10})
    decision = limited.decide(ADA, [reading(PERSON, day_usd=1.0, in_flight=3, turn_usd=0.5)], 0.0)
    assert decision.verdict is Verdict.ADMIT


def test_near_the_limit_a_turn_waits_for_the_ones_in_flight() -> None:
    limited = policy(person={"day_usd": 10})
    # 8 spent, 3 in flight at up to 0.5 each: a fourth could reach 10.
    near = limited.decide(ADA, [reading(PERSON, day_usd=8.0, in_flight=3, turn_usd=0.5)], 0.0)
    assert near.verdict is Verdict.WAIT
    alone = limited.decide(ADA, [reading(PERSON, day_usd=9.9, in_flight=0, turn_usd=0.5)], 0.0)
    assert alone.verdict is Verdict.ADMIT  # nothing in flight: one turn may run, the overspend is that turn


def test_an_unknown_turn_size_runs_the_scopes_turns_one_at_a_time() -> None:
    limited = policy(person={"day_usd": 10})
    assert limited.decide(ADA, [reading(PERSON, in_flight=1)], 0.0).verdict is Verdict.WAIT
    estimated = policy(person={"day_usd": 10}, turn_estimate_usd=0.1)
    assert estimated.decide(ADA, [reading(PERSON, in_flight=1)], 0.0).verdict is Verdict.ADMIT


def test_the_configured_estimate_is_a_floor_under_the_measured_turns() -> None:
    limited = policy(person={"day_usd": 10}, turn_estimate_usd=3.0)
    decision = limited.decide(ADA, [reading(PERSON, day_usd=4.5, in_flight=1, turn_usd=0.1)], 0.0)
    assert decision.verdict is Verdict.WAIT  # 4.5 + 2 × 3 crosses 10, though recent turns cost 0.1


def test_a_caller_that_waits_for_each_answer_gets_the_notice_every_time() -> None:
    limited = policy(person={"day_usd": 1})
    spent = [reading(PERSON, day_usd=1.0)]
    chat = limited.decide(ADA, spent, 0.0).refusal
    api = limited.decide(Actor("p-ada", "c9", platform="api"), spent, 0.0).refusal
    web = limited.decide(Actor("p-ada", "c8", platform="web"), spent, 0.0).refusal
    assert chat is not None and not chat.every_time
    assert api is not None and api.every_time and web is not None and web.every_time


def test_check_config_warns_when_usd_limits_meet_a_model_without_a_price() -> None:
    def warnings(**config: object) -> list[str]:
        return [note.text for note in startup_notes(Settings.model_validate(config)) if note.warning]

    offline = warnings(budgets={"person": {"day_usd": 1}})
    assert any("budgets: USD limits are set but the offline model has no price" in w for w in offline)
    assert not any(w.startswith("budgets:") for w in warnings(budgets={"person": {"day_tokens": 1000}}))
    anthropic = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
    priced = warnings(model=anthropic, anthropic_api_key="sk-test", budgets={"overall": {"month_usd": 5}})
    assert not any(w.startswith("budgets:") for w in priced)
