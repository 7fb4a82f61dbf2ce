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

CASES: tuple[ContractCase, ...] = (TELEGRAM,)
