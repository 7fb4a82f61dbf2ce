"""The typed settings tree: one model, read once at start-up from config.yaml plus environment overrides.

Precedence (highest first): environment variables (``MNEMOGATE_<SECTION>__<KEY>``, plus the well-known
provider variables such as ``ANTHROPIC_API_KEY``), then ``<home>/config.yaml``, then defaults.
Each component owns its section's model; this module only composes them. Unknown keys are errors,
so a typo in config.yaml is reported instead of silently ignored.
"""

from __future__ import annotations

import warnings
import zoneinfo
from typing import Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from agent_core.agent.settings import AgentSettings
from agent_core.compression.settings import CompressionSettings
from agent_core.llm.prices import UsageSettings
from agent_core.llm.settings import ModelSettings
from agent_core.memory.settings import MemorySettings
from agent_core.prompt.settings import PromptSettings
from agent_core.providers.settings import ProviderSettings
from agent_core.search.settings import SearchSettings
from agent_core.storage.sqlite.settings import StateSettings
from gateway.access.settings import AccessSettings, RateLimitSettings
from gateway.adapters_config import with_environment_credentials
from gateway.budgets.settings import BudgetSettings
from gateway.config.storage import StorageSettings, legacy_state_notes, merge_legacy_state, migration_hint
from gateway.delivery.settings import AdapterSettings, DeliverySettings
from gateway.inbound.settings import SessionSettings
from gateway.queue.settings import QueueSettings
from gateway.retention.settings import RetentionSettings
from gateway.schedules.settings import ScheduleSettings

# Used when a provider key is present but config.yaml names no model.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1-mini"}


class HttpSettings(BaseModel):
    """The one HTTP server: web chat, webhooks, health, metrics and the admin API, and its limits."""

    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    admin_token: SecretStr | None = None
    api_token: SecretStr | None = None  # for POST /v1/chat/completions (the admin token works too)
    api_reply_timeout_s: float = Field(default=120.0, gt=0)
    # Host names accepted besides the loopback ones. Without an admin token only loopback names and these
    # are served (a DNS-rebinding guard); with a token these only, and an empty list accepts any name.
    allowed_hosts: list[str] = Field(default_factory=list)
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)  # larger request bodies get 413 unread
    # Open connections at most (lowered to fit the process's open-file limit); when full, the connection
    # that has waited longest without sending a request is closed to make room.
    max_connections: int = Field(default=1000, ge=1)
    header_timeout_s: float = Field(default=10.0, gt=0)  # to send a request's line and headers
    body_timeout_s: float = Field(default=30.0, gt=0)  # to send the rest of a request's body
    keep_alive_s: int = Field(default=5, ge=1)  # an idle keep-alive connection is closed after this
    shutdown_grace_s: float = Field(default=10.0, ge=0)  # open requests may finish at stop, then cancelled

    @model_validator(mode="after")
    def _valid_host_names(self) -> HttpSettings:
        for name in self.allowed_hosts:
            wildcard = name.startswith("*") and name != "*"
            if not name or "*" in name[1:] or (wildcard and not name.startswith("*.")):
                raise ValueError(
                    f"http.allowed_hosts: {name!r} is not a host name or a '*.example.com' pattern"
                )
        return self


class AdminSettings(BaseModel):
    """The admin console in the browser (``/admin``): how it shows times and how long a sign-in lasts."""

    model_config = ConfigDict(extra="forbid")

    timezone: str = "UTC"  # an IANA name (Europe/Berlin, America/New_York): every time the console shows
    session_ttl_s: float = Field(default=8 * 3600.0, ge=60)  # a sign-in expires this long after it was made

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, name: str) -> str:
        try:
            zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"admin.timezone: {name!r} is not a known IANA time zone") from exc
        return name


class LogSettings(BaseModel):
    """Structured logging; message bodies are never logged unless ``include_bodies`` is set."""

    model_config = ConfigDict(extra="forbid")

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["auto", "json", "text"] = "auto"
    include_bodies: bool = False


class MemorySection(MemorySettings):
    """The ``memory`` section: the curated memory's layout and limits plus the external provider."""

    provider: ProviderSettings = Field(default_factory=ProviderSettings)


class Settings(BaseSettings):
    """Everything configurable; built by ``gateway.config.load_settings``."""

    model_config = SettingsConfigDict(
        env_prefix="MNEMOGATE_",
        env_nested_delimiter="__",
        extra="forbid",
        populate_by_name=True,
    )

    http: HttpSettings = Field(default_factory=HttpSettings)
    admin: AdminSettings = Field(default_factory=AdminSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    # Release 0.1's name of storage.sqlite, still read (file and MNEMOGATE_STATE__*) and moved there.
    state: StateSettings | None = Field(default=None, exclude=True, deprecated="read storage.sqlite")
    memory: MemorySection = Field(default_factory=lambda: MemorySection())
    model: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    prompt: PromptSettings = Field(default_factory=PromptSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    compression: CompressionSettings = Field(default_factory=CompressionSettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    rate_limit: RateLimitSettings = Field(default_factory=RateLimitSettings)
    queue: QueueSettings = Field(default_factory=QueueSettings)
    delivery: DeliverySettings = Field(default_factory=DeliverySettings)
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    adapters: dict[str, AdapterSettings] = Field(default_factory=dict)
    schedules: ScheduleSettings = Field(default_factory=ScheduleSettings)
    budgets: BudgetSettings = Field(default_factory=BudgetSettings)
    usage: UsageSettings = Field(default_factory=UsageSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)

    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("anthropic_api_key", "ANTHROPIC_API_KEY")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("openai_api_key", "OPENAI_API_KEY")
    )
    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("database_url", "DATABASE_URL")
    )
    honcho_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("honcho_api_key", "HONCHO_API_KEY")
    )
    mem0_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("mem0_api_key", "MEM0_API_KEY")
    )

    telegram_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("telegram_bot_token", "TELEGRAM_BOT_TOKEN")
    )
    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("slack_bot_token", "SLACK_BOT_TOKEN")
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("slack_app_token", "SLACK_APP_TOKEN")
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("slack_signing_secret", "SLACK_SIGNING_SECRET")
    )
    discord_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("discord_bot_token", "DISCORD_BOT_TOKEN")
    )

    _legacy_state: StateSettings | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _move_legacy_state(self) -> Settings:
        """Move the deprecated ``state`` section to ``storage.sqlite`` (``deprecations()`` names each key)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            legacy = self.state
        if legacy is not None:
            self.storage = merge_legacy_state(self.storage, legacy)
            self._legacy_state = legacy
        return self

    @model_validator(mode="after")
    def _postgres_dsn(self) -> Settings:
        """``DATABASE_URL`` is the DSN unless ``storage.postgres.dsn`` is set; postgres needs a DSN."""
        url = self.database_url.get_secret_value() if self.database_url is not None else None
        self.storage = self.storage.with_database_url(url)
        return self

    def deprecations(self) -> list[str]:
        """One line per deprecated setting in use, naming its replacement (logged at start, check-config)."""
        return legacy_state_notes(self._legacy_state)

    def migration_hint(self) -> str | None:
        """What to change in config.yaml and the environment to stop using deprecated settings, or None."""
        return migration_hint(self.storage, self._legacy_state)

    @model_validator(mode="after")
    def _hand_adapter_tokens(self) -> Settings:
        """Fill each adapter's unset credentials from the platform's well-known variable."""
        self.adapters = with_environment_credentials(
            self.adapters,
            {
                "TELEGRAM_BOT_TOKEN": self.telegram_bot_token,
                "SLACK_BOT_TOKEN": self.slack_bot_token,
                "SLACK_APP_TOKEN": self.slack_app_token,
                "SLACK_SIGNING_SECRET": self.slack_signing_secret,
                "DISCORD_BOT_TOKEN": self.discord_bot_token,
            },
        )
        return self

    @model_validator(mode="after")
    def _hand_memory_provider_keys(self) -> Settings:
        """Give the memory provider its key from the environment; a named provider without one is an error."""
        chosen = self.memory.provider.with_secrets(
            honcho_api_key=self.honcho_api_key, mem0_api_key=self.mem0_api_key
        )
        keys = {
            "honcho": (chosen.honcho.api_key, "HONCHO_API_KEY"),
            "mem0": (chosen.mem0.api_key, "MEM0_API_KEY"),
        }
        if chosen.name in keys and keys[chosen.name][0] is None:
            raise ValueError(
                f"memory.provider.name is {chosen.name} but no API key is set ({keys[chosen.name][1]})"
            )
        self.memory = self.memory.model_copy(update={"provider": chosen})
        return self

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

    def secret_values(self) -> list[str]:
        """Every configured secret (tokens, API keys), so logs can redact them verbatim."""
        found: list[str] = []
        _collect_secrets(self, found)
        return found

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


def _collect_secrets(value: object, found: list[str]) -> None:
    if isinstance(value, SecretStr):
        secret = value.get_secret_value()
        if secret:
            found.append(secret)
    elif isinstance(value, BaseModel):
        for name, field in type(value).model_fields.items():
            if not field.deprecated:  # a deprecated section was moved to its new name, secrets included
                _collect_secrets(getattr(value, name), found)
        for extra in (value.model_extra or {}).values():  # adapter options are extra fields
            _collect_secrets(extra, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_secrets(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_secrets(item, found)
