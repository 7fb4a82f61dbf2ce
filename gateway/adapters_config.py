"""Platform adapter configuration: credentials from the environment, start-up checks and the factory options.

Invariants: a credential named by a well-known variable (``TELEGRAM_BOT_TOKEN`` …) fills ``adapters.<name>``
only where config.yaml left it unset; a platform whose required token is known (environment or config) is
enabled unless ``adapters.<name>.enabled`` is set, and a token left unused by ``enabled: false`` is named
in a start-up warning; an enabled adapter without its token or its optional library stops start-up with
ONE ``AdapterConfigError`` naming every problem (the variable to set, the extra to install); no error or
warning ever carries a credential's value (pydantic input values are left out).
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
        "lease_s",
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
    """``adapters`` with each unset credential option filled from its variable in ``environment``, and each
    platform that has its required token enabled unless config sets ``enabled`` (a token is a request)."""
    merged: dict[str, AdapterSettings] = {}
    for name in [*adapters, *(known for known in ADAPTER_CREDENTIALS if known not in adapters)]:
        options = adapters.get(name, AdapterSettings())
        update: dict[str, object] = {}
        for source in ADAPTER_CREDENTIALS.get(name, ()):
            value = environment.get(source.variable)
            if options.secret(source.option) is None and value is not None and value.get_secret_value():
                update[source.option] = value
        if update:
            options = AdapterSettings.model_validate({**options.model_dump(exclude_unset=True), **update})
        if "enabled" not in options.model_fields_set and _has_required_credentials(name, options):
            options = options.model_copy(update={"enabled": True})
        if name in adapters or options.enabled:
            merged[name] = options
    return merged


def _has_required_credentials(name: str, options: AdapterSettings) -> bool:
    required = [source for source in ADAPTER_CREDENTIALS.get(name, ()) if source.required]
    return bool(required) and all(options.secret(source.option) is not None for source in required)


def dormant_credentials(adapters: Mapping[str, AdapterSettings]) -> list[str]:
    """One warning per platform whose token is set while ``enabled: false`` keeps it off (no values)."""
    return [
        f"{_token_origin(name)} is set but adapters.{name}.enabled is false: {name} stays off "
        "(remove enabled: false to turn it on, or unset the token)"
        for name, options in adapters.items()
        if not options.enabled and _has_required_credentials(name, options)
    ]


def _token_origin(name: str) -> str:
    required = [source for source in ADAPTER_CREDENTIALS[name] if source.required]
    variables = " and ".join(source.variable for source in required)
    options = " and ".join(f"adapters.{name}.{source.option}" for source in required)
    return f"{variables} (or {options})"


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
            hint = _install_hint(name)
            problems.append(f"{exc} ({hint})" if hint else str(exc))
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


def _install_hint(name: str) -> str:
    """For our own platforms: the checkout's way to install the library, and how to keep it off."""
    if name not in ADAPTER_CREDENTIALS:
        return ""
    return f"from a checkout: make run EXTRAS={name}; or set adapters.{name}.enabled: false to keep it off"


def _describe(exc: ValidationError) -> str:
    # Never str(exc): pydantic quotes the input value, which may be a token.
    return ", ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'options'}: {error['msg']}"
        for error in exc.errors(include_input=False, include_url=False)
    )
