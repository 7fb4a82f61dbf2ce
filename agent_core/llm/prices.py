"""What a model call costs: the price table (USD per million tokens of each kind, per model), its defaults
for current Anthropic and OpenAI models, and the operator's overrides from ``usage.prices``.

Invariants: a model without a price costs ``None`` (unknown), never a guess — not the nearest model's price,
not zero; ``offline`` is free because it runs no model. A model id matches its own entry, or the entry it is
a dated snapshot of (``claude-sonnet-4-5-20250929`` is priced as ``claude-sonnet-4-5``, ``gpt-4o-2024-08-06``
as ``gpt-4o``), never a mere prefix (``gpt-4o-mini`` is not ``gpt-4o``). The provider prefix of a client's
name (``anthropic:``, ``openai:``) is not part of the model id. Overrides replace a default entry whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_core.llm.settings import ModelSettings

__all__ = ["DEFAULT_PRICES", "PRICES_TAKEN", "ModelPrice", "PriceTable", "UsageSettings", "model_id"]

PRICES_TAKEN = "2025-11"
"""When the default prices were taken from the providers' public price pages (Anthropic: cache writes at the
5-minute TTL; OpenAI: cached input as cache read, cache writes not charged). Override them in
``usage.prices`` when the providers change them."""

_MILLION = 1_000_000
# A dated snapshot of a model: -20250929, -2024-08-06, or -latest.
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


class ModelPrice(BaseModel):
    """One model's price in USD per million tokens of each kind the clients report."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0, description="Uncached input tokens.")
    output: float = Field(ge=0, description="Output tokens (reasoning included).")
    cache_read: float = Field(default=0.0, ge=0, description="Input tokens read from the prompt cache.")
    cache_write: float = Field(default=0.0, ge=0, description="Input tokens written to the prompt cache.")

    def cost(self, input_tokens: int, output_tokens: int, cache_read: int, cache_write: int) -> float:
        """USD for a call that spent these tokens."""
        spent = (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_read * self.cache_read
            + cache_write * self.cache_write
        )
        return spent / _MILLION


def _price(input: float, output: float, cache_read: float, cache_write: float = 0.0) -> ModelPrice:
    return ModelPrice(input=input, output=output, cache_read=cache_read, cache_write=cache_write)


DEFAULT_PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        "offline": _price(0, 0, 0, 0),
        # Anthropic: cache read 0.1x input, cache write (5-minute TTL) 1.25x input.
        "claude-opus-4-5": _price(5.0, 25.0, 0.50, 6.25),
        "claude-opus-4-1": _price(15.0, 75.0, 1.50, 18.75),
        "claude-opus-4-0": _price(15.0, 75.0, 1.50, 18.75),
        "claude-opus-4": _price(15.0, 75.0, 1.50, 18.75),
        "claude-sonnet-4-5": _price(3.0, 15.0, 0.30, 3.75),
        "claude-sonnet-4-0": _price(3.0, 15.0, 0.30, 3.75),
        "claude-sonnet-4": _price(3.0, 15.0, 0.30, 3.75),
        "claude-3-7-sonnet": _price(3.0, 15.0, 0.30, 3.75),
        "claude-haiku-4-5": _price(1.0, 5.0, 0.10, 1.25),
        "claude-3-5-haiku": _price(0.80, 4.0, 0.08, 1.0),
        "claude-3-haiku": _price(0.25, 1.25, 0.03, 0.30),
        # OpenAI: cached input is the cache read; writing the cache costs nothing extra.
        "gpt-5": _price(1.25, 10.0, 0.125),
        "gpt-5-mini": _price(0.25, 2.0, 0.025),
        "gpt-5-nano": _price(0.05, 0.40, 0.005),
        "gpt-4.1": _price(2.0, 8.0, 0.50),
        "gpt-4.1-mini": _price(0.40, 1.60, 0.10),
        "gpt-4.1-nano": _price(0.10, 0.40, 0.025),
        "gpt-4o": _price(2.50, 10.0, 1.25),
        "gpt-4o-mini": _price(0.15, 0.60, 0.075),
        "o3": _price(2.0, 8.0, 0.50),
        "o4-mini": _price(1.10, 4.40, 0.275),
    }
)


ANTHROPIC_MODELS = frozenset(name for name in DEFAULT_PRICES if name.startswith("claude-"))
"""The built-in Anthropic entries (their cache-write price depends on the cache TTL)."""


def model_id(client_name: str) -> str:
    """The model id in a client's name: ``anthropic:claude-sonnet-4-5`` -> ``claude-sonnet-4-5``."""
    provider, sep, model = client_name.partition(":")
    return model if sep and provider in ("anthropic", "openai") else client_name


class PriceTable:
    """The prices in force: the defaults with the operator's entries laid over them.

    ``hour_cache``: models whose prompt cache is written with Anthropic's 1-hour TTL (``model.cache_ttl:
    1h``), whose built-in cache-write price is then 2x input instead of 1.25x (an override is kept as given).
    """

    def __init__(
        self,
        overrides: Mapping[str, ModelPrice] | None = None,
        *,
        defaults: bool = True,
        hour_cache: Iterable[str] = (),
    ) -> None:
        prices = dict(DEFAULT_PRICES) if defaults else {}
        for model in hour_cache:
            base = _SNAPSHOT.sub("", model)
            if base in ANTHROPIC_MODELS and base in prices:
                prices[base] = prices[base].model_copy(update={"cache_write": 2 * prices[base].input})
        prices.update(overrides or {})
        self._prices: Mapping[str, ModelPrice] = MappingProxyType(prices)

    def price(self, model: str) -> ModelPrice | None:
        """The model's price (by id, or the model it is a dated snapshot of); None when it has none."""
        found = self._prices.get(model)
        if found is None:
            base = _SNAPSHOT.sub("", model)
            found = self._prices.get(base) if base != model else None
        return found

    def cost(
        self, model: str | None, input_tokens: int, output_tokens: int, cache_read: int, cache_write: int
    ) -> float | None:
        """USD for a call of ``model`` that spent these tokens; None when the model has no price."""
        price = None if model is None else self.price(model)
        if price is None:
            return None
        return price.cost(input_tokens, output_tokens, cache_read, cache_write)

    def models(self) -> tuple[str, ...]:
        return tuple(sorted(self._prices))


class UsageSettings(BaseModel):
    """The ``usage`` section: price overrides, and the time zone usage days are counted in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Per model id: USD per million input/output/cache_read/cache_write tokens. An entry "
        "replaces the built-in price of that model; a model with no price is recorded with cost null.",
    )
    timezone: str | None = Field(
        default=None,
        description="IANA zone usage days and months are counted in; None: the console's admin.timezone.",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value

    def price_table(self, model: ModelSettings | None = None) -> PriceTable:
        """The table in force for the configured ``model`` (and its auxiliary): an Anthropic model cached
        with the 1-hour TTL pays the 1-hour cache-write price."""
        configured = [] if model is None else [model, *([model.auxiliary] if model.auxiliary else [])]
        hour = [m.model for m in configured if m.provider == "anthropic" and m.cache_ttl == "1h"]
        return PriceTable(self.prices, hour_cache=hour)
