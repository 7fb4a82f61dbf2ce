"""Typed model settings (:class:`ModelSettings`), validated once when the config is loaded.

The config layer fills these from the file/env; nothing in ``agent_core.llm`` reads the environment.
``max_attempts`` is the total number of HTTP requests one call may make (first try included), and no
retry is started if it would begin more than ``retry_budget_s`` after the first attempt did.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = ["ModelSettings", "Provider"]

Provider = Literal["offline", "anthropic", "openai"]

DEFAULT_BASE_URLS: Mapping[str, str] = MappingProxyType(
    {
        "anthropic": "https://api.anthropic.com",
        "openai": "https://api.openai.com/v1",
    }
)


class ModelSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider = "offline"
    model: str = "offline"
    api_key: SecretStr | None = None
    base_url: str | None = Field(
        default=None,
        description="Anthropic: without /v1. OpenAI-compatible: including /v1 (Ollama, vLLM, llama.cpp).",
    )
    max_tokens: int = Field(default=4096, ge=1)
    timeout_s: float = Field(default=120.0, gt=0, description="Per HTTP request, incl. gaps in a stream.")
    max_attempts: int = Field(default=3, ge=1, le=20)
    retry_budget_s: float = Field(default=60.0, gt=0)
    backoff_initial_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=20.0, ge=0)
    retry_after_cap_s: float = Field(
        default=30.0, ge=0, description="Longest wait honoured from retry-after."
    )
    context_window: int = Field(default=200_000, ge=1024)
    prompt_caching: bool = True
    cache_ttl: Literal["5m", "1h"] = "5m"
    auxiliary: ModelSettings | None = Field(
        default=None, description="Cheaper model for summaries; None means use this one."
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        return value.rstrip("/") if value else value

    def resolved_base_url(self) -> str | None:
        """The URL to call: the configured one, else the provider's public endpoint."""
        return self.base_url or DEFAULT_BASE_URLS.get(self.provider)

    def auxiliary_settings(self) -> ModelSettings:
        return self.auxiliary or self
