"""The price table: defaults for current models, dated snapshots priced as their model, overrides from
``usage.prices``, and an unknown model's cost unknown (None), never guessed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_core.llm import ModelSettings, UsageEvent
from agent_core.llm.prices import DEFAULT_PRICES, ModelPrice, PriceTable, UsageSettings, model_id
from agent_core.metering import UsageMeter
from agent_core.storage import ModelCall, TokenUsage, UsageKind


def test_a_call_costs_each_kind_of_token_at_its_own_price() -> None:
    table = PriceTable()
    # claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens.
    cost = table.cost("claude-sonnet-4-5", 1_000_000, 100_000, 2_000_000, 400_000)
    assert cost == pytest.approx(3.0 + 1.5 + 0.6 + 1.5)


def test_a_dated_snapshot_is_priced_as_its_model_but_a_longer_name_is_not() -> None:
    table = PriceTable()
    assert table.price("claude-sonnet-4-5-20250929") == DEFAULT_PRICES["claude-sonnet-4-5"]
    assert table.price("gpt-4o-2024-08-06") == DEFAULT_PRICES["gpt-4o"]
    assert table.price("gpt-4o-mini") == DEFAULT_PRICES["gpt-4o-mini"] != DEFAULT_PRICES["gpt-4o"]
    assert table.price("gpt-4o-audio-preview") is None
    assert table.cost("my-finetune", 10, 10, 0, 0) is None
    assert table.cost(None, 10, 10, 0, 0) is None


def test_overrides_replace_a_default_and_price_new_models() -> None:
    settings = UsageSettings.model_validate(
        {"prices": {"gpt-4o": {"input": 1, "output": 2}, "llama-3-70b": {"input": 0.5, "output": 0.5}}}
    )
    table = settings.price_table()
    assert table.cost("gpt-4o", 1_000_000, 1_000_000, 1_000_000, 0) == pytest.approx(3.0)  # no cache price
    assert table.cost("llama-3-70b", 2_000_000, 0, 0, 0) == pytest.approx(1.0)
    assert table.price("claude-haiku-4-5") == DEFAULT_PRICES["claude-haiku-4-5"]


def test_settings_refuse_a_negative_price_and_an_unknown_zone() -> None:
    with pytest.raises(ValidationError):
        UsageSettings.model_validate({"prices": {"x": {"input": -1, "output": 1}}})
    with pytest.raises(ValidationError, match="time zone"):
        UsageSettings(timezone="Mars/Olympus")
    assert UsageSettings(timezone="Europe/Paris").timezone == "Europe/Paris"


def test_the_meter_records_the_model_id_kind_and_priced_cost_of_a_call() -> None:
    meter = UsageMeter(PriceTable({"gpt-4o": ModelPrice(input=2, output=10, cache_read=1)}))
    call = meter.call("openai:gpt-4o", UsageKind.FLUSH, UsageEvent(500_000, 100_000, 1_000_000, 0))
    assert call == ModelCall(500_000, 100_000, 1_000_000, 0, pytest.approx(3.0), "gpt-4o", "flush")
    unknown = meter.call("scripted", UsageKind.TURN, TokenUsage(10, 2))
    assert unknown.cost_usd is None and unknown.model == "scripted" and unknown.kind == "turn"
    assert unknown.tokens() == TokenUsage(10, 2, 0, 0, 0.0)
    assert model_id("anthropic:claude-opus-4-5") == "claude-opus-4-5" and model_id("offline") == "offline"


def test_an_anthropic_model_cached_for_an_hour_pays_the_hour_cache_write_price() -> None:
    hourly = ModelSettings(provider="anthropic", model="claude-sonnet-4-5-20250929", cache_ttl="1h")
    price = UsageSettings().price_table(hourly).price("claude-sonnet-4-5")
    assert price is not None and price.cache_write == 6.0 and price.input == 3.0
    five_minutes = ModelSettings(provider="anthropic", model="claude-sonnet-4-5")
    assert (
        UsageSettings().price_table(five_minutes).price("claude-sonnet-4-5")
        == DEFAULT_PRICES["claude-sonnet-4-5"]
    )
    mine = {"claude-sonnet-4-5": {"input": 1, "output": 1, "cache_write": 1}}
    overridden = UsageSettings.model_validate({"prices": mine}).price_table(hourly).price("claude-sonnet-4-5")
    assert overridden is not None and overridden.cache_write == 1
