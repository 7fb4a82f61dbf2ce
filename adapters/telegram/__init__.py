"""The Telegram adapter (python-telegram-bot 22): polling or webhook, Markdown rendered to Telegram HTML."""

from collections.abc import Mapping
from typing import Any

from adapters.telegram.adapter import TELEGRAM_CAPABILITIES, TelegramAdapter
from adapters.telegram.config import TelegramSettings
from adapters.telegram.convert import BotIdentity, update_to_inbound
from adapters.telegram.render import TELEGRAM_LIMIT, TelegramHtml, render_telegram


def create_adapter(settings: TelegramSettings | Mapping[str, Any]) -> TelegramAdapter:
    """The entry point ``mnemogate.adapters: telegram``; accepts the settings model or its raw mapping."""
    model = settings if isinstance(settings, TelegramSettings) else TelegramSettings.model_validate(settings)
    return TelegramAdapter(model)


__all__ = [
    "TELEGRAM_CAPABILITIES",
    "TELEGRAM_LIMIT",
    "BotIdentity",
    "TelegramAdapter",
    "TelegramHtml",
    "TelegramSettings",
    "create_adapter",
    "render_telegram",
    "update_to_inbound",
]
