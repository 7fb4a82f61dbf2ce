"""Typed configuration of the external memory provider (the ``memory.provider`` section).

Invariants: at most one external provider is named; a per-provider section configured for a provider
other than the named one is a configuration error rather than silently ignored; secrets are ``SecretStr``
and arrive from the config layer (``HONCHO_API_KEY``, ``MEM0_API_KEY``), never from ``os.environ`` here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

ProviderName = Literal["none", "local", "honcho", "mem0"]


class BreakerSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    failure_threshold: int = Field(default=3, ge=1)
    reset_after_s: float = Field(default=30.0, gt=0)


class LocalProviderSettings(BaseModel):
    """Facts in ``<home>/<db_path>`` (SQLite + FTS5), extracted by the auxiliary model when one is set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    db_path: str = "providers/local.db"
    prefetch_limit: int = Field(default=8, ge=1, le=100)
    max_facts_per_turn: int = Field(default=5, ge=0, le=20)
    max_fact_chars: int = Field(default=300, ge=20)
    extraction_timeout_s: float = Field(default=20.0, gt=0)
    # Earlier conversations of the person whose best excerpts recall adds (session search's ranking); 0: none.
    recall_conversations: int = Field(default=2, ge=0, le=10)


class HonchoProviderSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr | None = None
    base_url: str = "https://api.honcho.dev"
    workspace_id: str = Field(default="mnemogate", min_length=1)
    agent_peer_id: str = Field(default="mnemogate-agent", min_length=1)
    person_peer_prefix: str = ""
    context_tokens: int = Field(default=1000, gt=0)
    request_timeout_s: float = Field(default=10.0, gt=0)


class Mem0ProviderSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr | None = None
    host: str = "https://api.mem0.ai"
    agent_id: str = Field(default="mnemogate", min_length=1)
    top_k: int = Field(default=5, ge=1, le=50)
    telemetry: bool = False


class ProviderSettings(BaseModel):
    """Which external provider runs beside the built-in memory, with its limits and its own section."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: ProviderName = "none"
    prefetch_timeout_s: float = Field(default=3.0, gt=0)
    call_timeout_s: float = Field(default=10.0, gt=0)
    recall_char_budget: int = Field(default=2000, ge=100)
    drain_timeout_s: float = Field(default=5.0, gt=0)
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)
    local: LocalProviderSettings = Field(default_factory=LocalProviderSettings)
    honcho: HonchoProviderSettings = Field(default_factory=HonchoProviderSettings)
    mem0: Mem0ProviderSettings = Field(default_factory=Mem0ProviderSettings)

    @model_validator(mode="after")
    def _one_provider(self) -> ProviderSettings:
        others = [
            section
            for section in ("local", "honcho", "mem0")
            if section != self.name and section in self.model_fields_set
        ]
        if others:
            raise ValueError(
                f"memory.provider.{others[0]} is configured but memory.provider.name is {self.name!r}: "
                "only one external memory provider can be active"
            )
        return self

    def with_secrets(
        self, *, honcho_api_key: SecretStr | None = None, mem0_api_key: SecretStr | None = None
    ) -> ProviderSettings:
        """These settings with keys from the environment filled in where config.yaml set none."""
        honcho, mem0 = self.honcho, self.mem0
        if honcho.api_key is None and honcho_api_key is not None:
            honcho = honcho.model_copy(update={"api_key": honcho_api_key})
        if mem0.api_key is None and mem0_api_key is not None:
            mem0 = mem0.model_copy(update={"api_key": mem0_api_key})
        return self.model_copy(update={"honcho": honcho, "mem0": mem0})
