"""The inbound side: the pipeline every adapter hands messages to, its command table and session rules."""

from gateway.inbound.builtin_commands import (
    NO_COMPRESSION,
    BuiltinCommands,
    CommandServices,
    Compressor,
    LinkHandler,
)
from gateway.inbound.chat_order import ChatOrder
from gateway.inbound.command_table import Command, CommandCall, CommandHandler, CommandTable
from gateway.inbound.errors import DuplicateCommandError, InboundError
from gateway.inbound.pipeline import InboundContext, InboundPipeline, OutcomeObserver, Stage, Stop
from gateway.inbound.session_rules import session_key_for
from gateway.inbound.settings import PlatformSessions, SessionSettings

__all__ = [
    "NO_COMPRESSION",
    "BuiltinCommands",
    "ChatOrder",
    "Command",
    "CommandCall",
    "CommandHandler",
    "CommandServices",
    "CommandTable",
    "Compressor",
    "DuplicateCommandError",
    "InboundContext",
    "InboundError",
    "InboundPipeline",
    "LinkHandler",
    "OutcomeObserver",
    "PlatformSessions",
    "SessionSettings",
    "Stage",
    "Stop",
    "session_key_for",
]
