"""The typed settings tree: one model, read once at start-up from config.yaml plus environment overrides.

Precedence (highest first): environment variables (``MNEMOGATE_<SECTION>__<KEY>``, plus the well-known
provider variables such as ``ANTHROPIC_API_KEY``), then ``<home>/config.yaml``, then defaults.
Each component owns its section's model; this module only composes them. Unknown keys are errors,
so a typo in config.yaml is reported instead of silently ignored.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from agent_core.agent.settings import AgentSettings
from agent_core.llm.settings import ModelSettings
from agent_core.memory.settings import MemorySettings
from agent_core.prompt.settings import PromptSettings
from agent_core.state.settings import StateSettings

# Used when a provider key is present but config.yaml names no model.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1-mini"}


class HttpSettings(BaseModel):
    """The one HTTP server: web chat, webhooks, health, metrics and the admin API."""

    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    admin_token: SecretStr | None = None


class LogSettings(BaseModel):
    """Structured logging; message bodies are never logged unless ``include_bodies`` is set."""

    model_config = ConfigDict(extra="forbid")

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["auto", "json", "text"] = "auto"
    include_bodies: bool = False


class Settings(BaseSettings):
    """Everything configurable; built by ``gateway.config.load_settings``."""

    model_config = SettingsConfigDict(
        env_prefix="MNEMOGATE_",
        env_nested_delimiter="__",
        extra="forbid",
        populate_by_name=True,
    )

    http: HttpSettings = Field(default_factory=HttpSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    state: StateSettings = Field(default_factory=StateSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    prompt: PromptSettings = Field(default_factory=PromptSettings)

    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("anthropic_api_key", "ANTHROPIC_API_KEY")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("openai_api_key", "OPENAI_API_KEY")
    )

    @model_validator(mode="after")
    def _choose_model_provider(self) -> Settings:
        """Pick the provider when config.yaml names none, and hand it the provider's key.

        No provider configured: Anthropic when ANTHROPIC_API_KEY is set, else OpenAI when OPENAI_API_KEY
        is set, else the offline model, so a fresh checkout runs with no key at all.
        """
        chosen = self.model
        explicit = "provider" in chosen.model_fields_set
        if not explicit and chosen.api_key is None:
            if self.anthropic_api_key is not None:
                chosen = chosen.model_copy(
                    update={"provider": "anthropic", "model": DEFAULT_MODELS["anthropic"]}
                )
            elif self.openai_api_key is not None:
                chosen = chosen.model_copy(update={"provider": "openai", "model": DEFAULT_MODELS["openai"]})
        if chosen.api_key is None:
            key = {"anthropic": self.anthropic_api_key, "openai": self.openai_api_key}.get(chosen.provider)
            if key is not None:
                chosen = chosen.model_copy(update={"api_key": key})
        if chosen.provider != "offline" and chosen.api_key is None:
            variable = "ANTHROPIC_API_KEY" if chosen.provider == "anthropic" else "OPENAI_API_KEY"
            if chosen.provider == "anthropic" or chosen.base_url is None:
                raise ValueError(f"model.provider is {chosen.provider} but no API key is set ({variable})")
        self.model = chosen
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The YAML file arrives as init kwargs (see loader.py); environment variables must beat it.
        return (env_settings, init_settings)
