"""Adapter configuration: tokens from the environment, one clear start-up error, tokens never printed."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.telegram import TelegramAdapter
from gateway.adapters_config import adapter_options, dormant_credentials
from gateway.config import Settings, load_settings
from gateway.contracts import AdapterConfigError
from gateway.logging_setup import configure_logging
from gateway.runtime import configured_adapters

TOKEN = "987654:SECRET-bot-token-value"
_PLATFORM_VARIABLES = (
    "TELEGRAM_BOT_TOKEN",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET",
    "DISCORD_BOT_TOKEN",
)


@pytest.fixture(autouse=True)
def _no_platform_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PLATFORM_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _config(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text)
    return path


def test_the_bot_token_comes_from_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    settings = load_settings(_config(home, "adapters:\n  telegram:\n    enabled: true\n"))
    token = settings.adapters["telegram"].secret("token")
    assert token is not None and token.get_secret_value() == TOKEN
    assert TOKEN not in repr(settings)
    assert TOKEN in settings.secret_values()  # so log redaction hides it
    (adapter,) = configured_adapters(settings).values()
    assert isinstance(adapter, TelegramAdapter)


def test_a_token_alone_in_the_environment_turns_its_platform_on(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    settings = load_settings(home / "config.yaml")  # no config.yaml at all
    (adapter,) = configured_adapters(settings).values()
    assert isinstance(adapter, TelegramAdapter)
    assert dormant_credentials(settings.adapters) == []


def test_enabled_false_keeps_a_platform_off_and_says_its_token_is_unused(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("DISCORD_BOT_TOKEN", TOKEN + "-discord")
    settings = load_settings(
        _config(home, "adapters:\n  telegram:\n    enabled: false\n  discord:\n    enabled: true\n")
    )
    assert set(configured_adapters(settings)) == {"discord"}
    (note,) = dormant_credentials(settings.adapters)
    assert note.startswith("TELEGRAM_BOT_TOKEN (or adapters.telegram.token) is set")
    assert "adapters.telegram.enabled is false: telegram stays off" in note
    assert TOKEN not in note


def test_a_token_that_is_not_the_required_one_turns_nothing_on(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-alone")  # Slack needs its bot token to run at all
    settings = load_settings(home / "config.yaml")
    assert configured_adapters(settings) == {}
    assert dormant_credentials(settings.adapters) == []


def test_a_token_in_config_wins_over_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-env")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-from-env")
    settings = load_settings(
        _config(
            home,
            "adapters:\n  slack:\n    enabled: false\n    bot_token: xoxb-from-config\n"
            "    team_tokens: {T2: xoxb-second-team}\n",
        )
    )
    slack = settings.adapters["slack"]
    assert slack.secret("bot_token") is not None
    assert slack.secret("bot_token").get_secret_value() == "xoxb-from-config"  # type: ignore[union-attr]
    assert slack.secret("app_token").get_secret_value() == "xapp-from-env"  # type: ignore[union-attr]
    assert {"xoxb-from-config", "xapp-from-env", "xoxb-second-team"} <= set(settings.secret_values())
    assert adapter_options(slack)["team_tokens"] == {"T2": "xoxb-second-team"}  # plain for the factory


def test_every_configuration_problem_is_named_in_one_error() -> None:
    settings = Settings.model_validate(
        {"adapters": {"telegram": {"enabled": True}, "nosuchchat": {"enabled": True}}}
    )
    with pytest.raises(AdapterConfigError) as raised:
        configured_adapters(settings)
    message = str(raised.value)
    assert "telegram is enabled but TELEGRAM_BOT_TOKEN is not set" in message
    assert "no adapter named 'nosuchchat'" in message


def test_an_invalid_option_is_reported_without_the_token() -> None:
    settings = Settings.model_validate(
        {"adapters": {"telegram": {"enabled": True, "token": TOKEN, "mode": "carrier-pigeon"}}}
    )
    with pytest.raises(AdapterConfigError, match=r"adapters\.telegram: mode") as raised:
        configured_adapters(settings)
    assert TOKEN not in str(raised.value)


def test_gateway_options_do_not_reach_the_adapter() -> None:
    # TelegramSettings forbids unknown keys: streaming is the gateway's option, not the adapter's.
    settings = Settings.model_validate(
        {"adapters": {"telegram": {"enabled": True, "token": TOKEN, "streaming": True}}}
    )
    assert isinstance(configured_adapters(settings)["telegram"], TelegramAdapter)


def test_an_adapter_token_is_redacted_from_logs(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISCORD_BOT_TOKEN", TOKEN)
    settings = load_settings(
        _config(home, "log:\n  format: text\nadapters:\n  discord:\n    enabled: false\n")
    )
    handler = configure_logging(settings.log, secrets=settings.secret_values())
    try:
        logging.getLogger("mnemogate.test").warning("connecting with %s", TOKEN)
        captured = capsys.readouterr()
        assert "connecting with" in captured.err + captured.out
        assert TOKEN not in captured.err + captured.out
    finally:
        logging.getLogger().removeHandler(handler)  # it writes to this test's captured stderr


def test_serve_without_the_token_stops_with_one_line_naming_the_variable(home: Path) -> None:
    _config(home, "adapters:\n  telegram:\n    enabled: true\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "serve", "--port", "0", "--home", str(home)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert errors[-1].startswith("mnemogate: error:")
    assert "TELEGRAM_BOT_TOKEN" in errors[-1]
    assert "Traceback" not in done.stderr
