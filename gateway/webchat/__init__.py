"""The embedded web chat and API channels: adapters whose "platform" is this gateway's own HTTP server."""

from gateway.webchat.adapter import ANSWER_KINDS, WEB_CAPABILITIES, PendingReply, Reply, WebChatAdapter
from gateway.webchat.errors import ChannelNotStartedError, MessageRefusedError, ReplyTimeoutError
from gateway.webchat.feed import DEFAULT_MAX_BYTES, ChatFeed, Cursor, Delivery
from gateway.webchat.sequence import ChatSequence, Slot

__all__ = [
    "ANSWER_KINDS",
    "DEFAULT_MAX_BYTES",
    "WEB_CAPABILITIES",
    "ChannelNotStartedError",
    "ChatFeed",
    "ChatSequence",
    "Cursor",
    "Delivery",
    "MessageRefusedError",
    "PendingReply",
    "Reply",
    "ReplyTimeoutError",
    "Slot",
    "WebChatAdapter",
]
