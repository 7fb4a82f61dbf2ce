"""The ``config.yaml`` and credential environment a serve-level test gives ``mnemogate serve`` for a platform.

Every config is built from dicts and written with ``yaml.safe_dump``, so values keep their types (ids stay
strings, timeouts numbers). Unless a test says otherwise, rate limiting is off (tests send bursts), a
SIGTERM gives in-flight turns 2 s, and a killed gateway's polling or socket adapter lease ends after 3 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agent_core.llm.fakes import FakeOpenAIServer
from tests.adapters.fakes.discord_server import FakeDiscordServer
from tests.adapters.fakes.slack_server import FakeSlackServer
from tests.adapters.fakes.telegram_server import FakeTelegramServer

Section = dict[str, Any]
DEFAULT_SECTIONS: dict[str, Section] = {"rate_limit": {"enabled": False}, "queue": {"drain_grace_s": 2}}


def write_config(
    home: Path,
    *,
    adapters: dict[str, Section],
    access: dict[str, Section],
    model: Section | None = None,
    **sections: Section,
) -> None:
    """Write ``home/config.yaml`` (making ``home`` if need be); each of ``sections`` is laid over its
    default (``queue={...}`` keeps the default drain grace unless it names one)."""
    config: Section = {"adapters": adapters, "access": access}
    for name in DEFAULT_SECTIONS.keys() | sections.keys():
        config[name] = {**DEFAULT_SECTIONS.get(name, {}), **sections.get(name, {})}
    if model is not None:
        config["model"] = model
    home.mkdir(exist_ok=True)
    home.joinpath("config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def allowlist(*user_ids: object) -> Section:
    """Access for exactly these platform user ids (written as strings, as the platform sends them)."""
    return {"mode": "allowlist", "allow": [str(user_id) for user_id in user_ids]}


def openai_model(server: FakeOpenAIServer) -> Section:
    """The model section for a fake OpenAI-compatible server, one attempt per turn (failures show at once)."""
    return {"provider": "openai", "model": "fake", "base_url": server.base_url, "max_attempts": 1}


def telegram_options(fake: FakeTelegramServer, **overrides: object) -> Section:
    """The Telegram adapter polling ``fake`` with short timeouts and a quick first start retry."""
    return {
        "enabled": True, "start_retry_initial_s": 0.1, "api_base_url": fake.api_base_url,
        "file_base_url": fake.file_base_url, "poll_timeout_s": 1, "request_timeout_s": 5, "lease_s": 3,
        **overrides,
    }  # fmt: skip


def slack_options(fake: FakeSlackServer, **overrides: object) -> Section:
    """The Slack adapter (Events API over HTTP) calling ``fake``'s Web API."""
    return {"enabled": True, "api_base_url": fake.api_base_url, "request_timeout_s": 5, **overrides}


def discord_options(fake: FakeDiscordServer, **overrides: object) -> Section:
    """The Discord adapter on ``fake``'s REST API and gateway, not waiting long for guilds to be ready."""
    return {
        "enabled": True, "api_base_url": fake.api_base, "gateway_url": fake.gateway_url,
        "guild_ready_timeout_s": 0.05, "connect_timeout_s": 10, "lease_s": 3, **overrides,
    }  # fmt: skip


def telegram_credentials(fake: FakeTelegramServer) -> dict[str, str]:
    return {"TELEGRAM_BOT_TOKEN": fake.token}


def slack_credentials(fake: FakeSlackServer, signing_secret: str) -> dict[str, str]:
    return {"SLACK_BOT_TOKEN": fake.bot_token, "SLACK_SIGNING_SECRET": signing_secret}


def discord_credentials(fake: FakeDiscordServer) -> dict[str, str]:
    return {"DISCORD_BOT_TOKEN": fake.token}
