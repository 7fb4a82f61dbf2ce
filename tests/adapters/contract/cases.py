"""The adapters the shared contract suite runs against: one ``ContractCase`` per platform.

A new platform joins the suite by adding its case to ``CASES``: an offline-constructed adapter, a
function converting one recorded payload (JSON) to an ``InboundMessage``, the payload directory (each
``<name>.json`` with a golden ``<name>.expected.json``) and the platform fake's acceptance check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from telegram import Update

from adapters.telegram import BotIdentity, create_adapter, update_to_inbound
from gateway.contracts import Adapter, InboundMessage
from tests.adapters.fakes.telegram_server import telegram_html_text

Json = dict[str, Any]
PAYLOADS = Path(__file__).parent / "payloads"


@dataclass(frozen=True)
class ContractCase:
    platform: str
    make_adapter: Callable[[], Adapter]
    convert: Callable[[Json], InboundMessage | None]
    payload_dir: Path
    accept_chunk: Callable[[str], object]
    """Raises when the platform would reject this rendered chunk (its fake's validator)."""

    def __str__(self) -> str:
        return self.platform


def inbound_as_json(message: InboundMessage | None) -> Json | None:
    """The golden form of a converted message: every field but ``raw``."""
    if message is None:
        return None
    data = asdict(message)
    data.pop("raw", None)
    data["chat"]["kind"] = str(message.chat.kind)
    data["attachments"] = [dict(a) for a in data["attachments"]]
    return data


TELEGRAM_BOT = BotIdentity(123456, "mnemo_bot")


def _telegram_adapter() -> Adapter:
    return create_adapter({"token": "123456:CONTRACT-TOKEN"})


def _telegram_convert(payload: Json) -> InboundMessage | None:
    return update_to_inbound(Update.de_json(payload, None), TELEGRAM_BOT)


TELEGRAM = ContractCase(
    platform="telegram",
    make_adapter=_telegram_adapter,
    convert=_telegram_convert,
    payload_dir=PAYLOADS / "telegram",
    accept_chunk=telegram_html_text,
)


def _slack_adapter() -> Adapter:
    # Imported here so this block stays one self-contained edit beside the other platforms' cases.
    from adapters.slack import create_adapter as create_slack_adapter

    return create_slack_adapter({"bot_token": "xoxb-contract", "signing_secret": "contract-secret"})


def _slack_convert(payload: Json) -> InboundMessage | None:
    from adapters.slack import BotIdentity as SlackBot
    from adapters.slack import event_to_inbound

    return event_to_inbound(payload, SlackBot("UBOT", "BBOT"))


def _slack_accept(chunk: str) -> object:
    from tests.adapters.fakes.slack_server import slack_mrkdwn_text

    return slack_mrkdwn_text(chunk)


SLACK = ContractCase("slack", _slack_adapter, _slack_convert, PAYLOADS / "slack", _slack_accept)


def _discord_adapter() -> Adapter:
    # Imported here so this block stays one self-contained edit beside the other platforms' cases.
    from adapters.discord import create_adapter as create_discord_adapter

    return create_discord_adapter({"token": "CONTRACT.DISCORD.TOKEN"})


def _discord_convert(payload: Json) -> InboundMessage | None:
    from adapters.discord import BotIdentity as DiscordBot
    from adapters.discord import message_to_inbound
    from tests.adapters.fakes.discord_server import replay_message

    return message_to_inbound(replay_message(payload), DiscordBot(900000000000000001, "mnemo"))


def _discord_accept(chunk: str) -> object:
    from tests.adapters.fakes.discord_server import discord_content

    return discord_content(chunk)


DISCORD = ContractCase("discord", _discord_adapter, _discord_convert, PAYLOADS / "discord", _discord_accept)

CASES: tuple[ContractCase, ...] = (TELEGRAM, SLACK, DISCORD)
