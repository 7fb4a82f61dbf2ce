"""The Slack adapter (slack-bolt AsyncApp): Events API or Socket Mode, Markdown rendered to mrkdwn."""

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from adapters.slack.adapter import SLACK_CAPABILITIES, SlackAdapter
from adapters.slack.config import SlackSettings
from adapters.slack.convert import BotIdentity, event_to_inbound
from adapters.slack.render import SLACK_CHUNK_LIMIT, SlackMrkdwn, escape_mrkdwn, render_slack

# Options the gateway keeps for itself in ``adapters.<name>``; the adapter never sees them as its own.
_GATEWAY_OPTIONS = ("enabled", "streaming", "streaming_interval_s")


def create_adapter(settings: SlackSettings | BaseModel | Mapping[str, Any]) -> SlackAdapter:
    """The entry point ``mnemogate.adapters: slack``; accepts the settings model or its raw mapping."""
    if isinstance(settings, SlackSettings):
        return SlackAdapter(settings)
    raw = dict(settings.model_dump() if isinstance(settings, BaseModel) else settings)
    for key in _GATEWAY_OPTIONS:
        raw.pop(key, None)
    return SlackAdapter(SlackSettings.model_validate(raw))


__all__ = [
    "SLACK_CAPABILITIES",
    "SLACK_CHUNK_LIMIT",
    "BotIdentity",
    "SlackAdapter",
    "SlackMrkdwn",
    "SlackSettings",
    "create_adapter",
    "escape_mrkdwn",
    "event_to_inbound",
    "render_slack",
]
