"""Platform adapter configuration: credentials from the environment, start-up checks and the factory options.

Invariants: a credential named by a well-known variable (``TELEGRAM_BOT_TOKEN`` …) fills ``adapters.<name>``
only where config.yaml left it unset; an enabled adapter without its token or its optional library stops
start-up with ONE ``AdapterConfigError`` naming every problem (the variable to set, the extra to install);
no error message ever carries a credential's value (pydantic input values are left out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr, ValidationError

from gateway.contracts import Adapter, AdapterConfigError, AdapterFactory, load_adapter_factory
from gateway.delivery.settings import AdapterSettings

GATEWAY_OPTIONS = frozenset(
    {
        "enabled",
        "streaming",
        "streaming_interval_s",
        "start_retry_initial_s",
        "start_retry_max_s",
        "restart_after_s",
    }
)
"""Options of ``adapters.<name>`` the gateway reads itself; they are not passed to the adapter factory."""


@dataclass(frozen=True)
class CredentialSource:
    """An adapter option that may come from an environment variable; ``required`` for every enabled use."""

    option: str
    variable: str
    required: bool


ADAPTER_CREDENTIALS: Mapping[str, tuple[CredentialSource, ...]] = {
    "telegram": (CredentialSource("token", "TELEGRAM_BOT_TOKEN", required=True),),
    # Socket Mode needs the app token and HTTP mode the signing secret; the Slack adapter decides which.
    "slack": (
        CredentialSource("bot_token", "SLACK_BOT_TOKEN", required=True),
        CredentialSource("app_token", "SLACK_APP_TOKEN", required=False),
        CredentialSource("signing_secret", "SLACK_SIGNING_SECRET", required=False),
    ),
    "discord": (CredentialSource("token", "DISCORD_BOT_TOKEN", required=True),),
}


def with_environment_credentials(
    adapters: Mapping[str, AdapterSettings], environment: Mapping[str, SecretStr | None]
) -> dict[str, AdapterSettings]:
    """``adapters`` with each unset credential option filled from its variable in ``environment``."""
    merged: dict[str, AdapterSettings] = {}
    for name, options in adapters.items():
        update: dict[str, SecretStr] = {}
        for source in ADAPTER_CREDENTIALS.get(name, ()):
            value = environment.get(source.variable)
            if options.secret(source.option) is None and value is not None and value.get_secret_value():
                update[source.option] = value
        if update:
            options = AdapterSettings.model_validate({**options.model_dump(), **update})
        merged[name] = options
    return merged


def missing_credentials(name: str, options: AdapterSettings) -> list[str]:
    """One line per required credential an enabled adapter lacks, naming the variable to set."""
    return [
        f"{name} is enabled but {source.variable} is not set (or adapters.{name}.{source.option})"
        for source in ADAPTER_CREDENTIALS.get(name, ())
        if source.required and options.secret(source.option) is None
    ]


def adapter_options(options: AdapterSettings) -> dict[str, Any]:
    """The adapter's own options as a plain mapping for its factory (credentials as plain strings)."""
    return {
        key: _revealed(value)
        for key, value in (options.model_extra or {}).items()
        if key not in GATEWAY_OPTIONS
    }


def _revealed(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {key: _revealed(item) for key, item in value.items()}
    return value


def build_adapters(adapters: Mapping[str, AdapterSettings]) -> dict[str, Adapter]:
    """Every enabled adapter, built; all configuration problems at once in one ``AdapterConfigError``."""
    enabled = {name: options for name, options in adapters.items() if options.enabled}
    problems = [line for name, options in enabled.items() for line in missing_credentials(name, options)]
    factories: dict[str, AdapterFactory] = {}
    for name in enabled:
        try:
            factories[name] = load_adapter_factory(name)
        except AdapterConfigError as exc:
            problems.append(str(exc))
    if problems:
        raise AdapterConfigError("; ".join(problems))
    built: dict[str, Adapter] = {}
    for name, factory in factories.items():
        try:
            built[name] = factory(adapter_options(enabled[name]))
        except ValidationError as exc:
            problems.append(f"adapters.{name}: {_describe(exc)}")
        except AdapterConfigError as exc:
            problems.append(str(exc))
    if problems:
        raise AdapterConfigError("; ".join(problems))
    return built


def _describe(exc: ValidationError) -> str:
    # Never str(exc): pydantic quotes the input value, which may be a token.
    return ", ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'options'}: {error['msg']}"
        for error in exc.errors(include_input=False, include_url=False)
    )
