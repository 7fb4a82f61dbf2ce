"""Settings: config.yaml plus environment, defaults that run offline, errors that name the bad key."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.config import ConfigError, load_settings, resolve_home


def _write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_means_defaults_and_the_offline_model(home: Path) -> None:
    settings = load_settings(home / "config.yaml")
    assert settings.model.provider == "offline"
    assert settings.http.host == "127.0.0.1"
    assert settings.memory.isolation == "person"


def test_file_values_are_read(home: Path) -> None:
    settings = load_settings(_write(home, "memory:\n  isolation: shared\nhttp:\n  port: 9000\n"))
    assert settings.memory.isolation == "shared"
    assert settings.http.port == 9000


def test_environment_overrides_the_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOGATE_HTTP__PORT", "9100")
    settings = load_settings(_write(home, "http:\n  port: 9000\n"))
    assert settings.http.port == 9100


def test_a_typo_is_reported_with_its_dotted_key(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"memory\.isolaton: Extra inputs are not permitted"):
        load_settings(_write(home, "memory:\n  isolaton: shared\n"))


def test_a_bad_value_is_reported_with_its_dotted_key(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"memory\.memory_char_limit"):
        load_settings(_write(home, "memory:\n  memory_char_limit: plenty\n"))


def test_broken_yaml_names_the_file_and_line(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"config\.yaml: line \d+ is not valid YAML"):
        load_settings(_write(home, "memory:\n  - [\n"))


def test_an_anthropic_key_selects_anthropic(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    settings = load_settings(home / "config.yaml")
    assert settings.model.provider == "anthropic"
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == "sk-ant-test"


def test_a_provider_without_its_key_is_refused(home: Path) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        load_settings(_write(home, "model:\n  provider: anthropic\n"))


def test_a_local_openai_compatible_server_needs_no_key(home: Path) -> None:
    text = "model:\n  provider: openai\n  model: llama3\n  base_url: http://127.0.0.1:11434/v1\n"
    assert load_settings(_write(home, text)).model.provider == "openai"


def test_home_precedence(tmp_path: Path) -> None:
    env = {"MNEMOGATE_HOME": str(tmp_path / "env")}
    assert resolve_home(str(tmp_path / "cli"), env).root == tmp_path / "cli"
    assert resolve_home(None, env).root == tmp_path / "env"
    assert resolve_home(None, {}).root == Path("~/.mnemogate").expanduser()


def test_an_undecodable_environment_list_is_a_config_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOGATE_ACCESS__ADMINS", "telegram:1")
    with pytest.raises(ConfigError, match="invalid environment override"):
        load_settings(home / "config.yaml")


def test_every_configured_secret_is_known_for_log_redaction(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    settings = load_settings(_write(home, "http:\n  admin_token: admin-secret-token\n"))
    assert {"sk-ant-secret-value", "admin-secret-token"} <= set(settings.secret_values())
