"""The ``access`` and ``rate_limit`` config sections, as an operator writes them in config.yaml and env."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.access.settings import NewPersonsSettings, RateLimitSettings
from gateway.config import ConfigError, load_settings


def load(home: Path, yaml_text: str) -> object:
    config = home / "config.yaml"
    config.write_text(yaml_text, encoding="utf-8")
    return load_settings(config)


def test_defaults_open_web_and_close_everything_else(home: Path) -> None:
    settings = load_settings(home / "config.yaml")
    assert settings.access.for_platform("web").mode == "open"
    assert settings.access.for_platform("api").mode == "open"  # behind the admin bearer token
    for platform in ("telegram", "slack", "discord", "matrix"):
        policy = settings.access.for_platform(platform)
        assert policy.mode == "allowlist" and not policy.allows("1") and not policy.pairing
    assert settings.rate_limit.capacity == 10 and settings.rate_limit.refill_s == 6.0


def test_yaml_platform_sections_admins_and_env_overrides(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOGATE_ACCESS__SLACK__ALLOW", '["U1", "U2"]')
    monkeypatch.setenv("MNEMOGATE_RATE_LIMIT__CAPACITY", "3")
    config = home / "config.yaml"
    config.write_text(
        "access:\n  admins: ['telegram:1']\n  telegram:\n    allow: [123456789]\n    pairing: true\n"
        "  link:\n    ttl_s: 300\n",
        encoding="utf-8",
    )
    settings = load_settings(config)
    telegram = settings.access.for_platform("telegram")
    assert telegram.allows("123456789") and telegram.pairing
    assert settings.access.for_platform("slack").allow == frozenset({"U1", "U2"})
    assert settings.access.admins == ("telegram:1",)
    assert settings.access.link.ttl_s == 300
    assert settings.rate_limit.capacity == 3


@pytest.mark.parametrize(
    ("yaml_text", "bad_key"),
    [
        ("access:\n  telegram:\n    alow: [1]\n", "access.telegram.alow"),
        ("access:\n  admins: ['123']\n", "access.admins"),
        ("access:\n  telegram:\n    mode: closed\n", "access.telegram.mode"),
        ("rate_limit:\n  capacity: 0\n", "rate_limit.capacity"),
        ("access:\n  link:\n    code_length: 4\n", "access.link.code_length"),
    ],
)
def test_mistakes_are_reported_by_key(home: Path, yaml_text: str, bad_key: str) -> None:
    with pytest.raises(ConfigError, match=bad_key.replace(".", r"\.")):
        load(home, yaml_text)


def test_turning_rate_limits_off_also_stops_limiting_new_browsers_per_address() -> None:
    assert RateLimitSettings().new_persons_budget().enabled
    off = RateLimitSettings(enabled=False)
    assert not off.new_persons_budget().enabled
    assert (
        not RateLimitSettings(new_web_persons=NewPersonsSettings(enabled=False)).new_persons_budget().enabled
    )
