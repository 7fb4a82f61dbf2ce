"""The contracts between the gateway and its adapters; standard library only.

Adapters import this package and nothing else of the gateway (import-linter checks it).
"""

from gateway.contracts.adapter import (
    ENTRY_POINT_GROUP,
    Adapter,
    AdapterFactory,
    AdapterHealth,
    Checkpoints,
    HttpRoute,
    InboundOutcome,
    InboundSink,
    load_adapter_factory,
)
from gateway.contracts.capabilities import Capabilities, LengthUnit, text_length
from gateway.contracts.errors import AdapterConfigError, AdapterError, BadFormatError, SendError
from gateway.contracts.messages import (
    Attachment,
    ChatKind,
    ChatRef,
    InboundMessage,
    OutboundMessage,
    SendReceipt,
    UserRef,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Adapter",
    "AdapterConfigError",
    "AdapterError",
    "AdapterFactory",
    "AdapterHealth",
    "Attachment",
    "BadFormatError",
    "Capabilities",
    "ChatKind",
    "ChatRef",
    "Checkpoints",
    "HttpRoute",
    "InboundMessage",
    "InboundOutcome",
    "InboundSink",
    "LengthUnit",
    "OutboundMessage",
    "SendError",
    "SendReceipt",
    "UserRef",
    "load_adapter_factory",
    "text_length",
]
