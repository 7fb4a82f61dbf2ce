"""The embedded web chat and API channels: adapters whose "platform" is this gateway's own HTTP server."""

from gateway.webchat.adapter import WEB_CAPABILITIES, WebChatAdapter
from gateway.webchat.errors import ChannelNotStartedError, ReplyTimeoutError
from gateway.webchat.feed import ChatFeed, Cursor, Delivery

__all__ = [
    "WEB_CAPABILITIES",
    "ChannelNotStartedError",
    "ChatFeed",
    "Cursor",
    "Delivery",
    "ReplyTimeoutError",
    "WebChatAdapter",
]
