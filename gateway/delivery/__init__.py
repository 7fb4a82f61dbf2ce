"""Delivery: the outbox (replies and notices queued exactly once) and the loop that sends it per platform."""

from gateway.delivery.chat_budget import ChatBudgets
from gateway.delivery.delivery_loop import DeliveryLoop, FailureHook
from gateway.delivery.errors import DeliveryError, NoAdapterError
from gateway.delivery.outbox import Outbox
from gateway.delivery.outbox_pruner import OutboxPruner
from gateway.delivery.plain_text import plain_text
from gateway.delivery.settings import AdapterSettings, ChatRate, DeliverySettings
from gateway.delivery.streaming import (
    LiveChannel,
    ReplyStream,
    StreamedMessage,
    StreamingAgent,
    StreamRegistry,
    TurnActivity,
    TurnFollower,
)

__all__ = [
    "AdapterSettings",
    "ChatBudgets",
    "ChatRate",
    "DeliveryError",
    "DeliveryLoop",
    "DeliverySettings",
    "FailureHook",
    "LiveChannel",
    "NoAdapterError",
    "Outbox",
    "OutboxPruner",
    "ReplyStream",
    "StreamRegistry",
    "StreamedMessage",
    "StreamingAgent",
    "TurnActivity",
    "TurnFollower",
    "plain_text",
]
