"""The embedded web chat and API channels: adapters whose "platform" is this gateway's own HTTP server."""

from gateway.webchat.adapter import WEB_CAPABILITIES, WebChatAdapter
from gateway.webchat.browser import ACTIVITY_KEY, STREAM_INTERVAL_S, BrowserChat, activity_label
from gateway.webchat.errors import ChannelNotStartedError, MessageRefusedError, ReplyTimeoutError
from gateway.webchat.feed import DEFAULT_MAX_BYTES, ChatFeed, Cursor, Delivery
from gateway.webchat.person_services import PersonServices
from gateway.webchat.rendering import plain_html, render_html, sanitise_html

__all__ = [
    "ACTIVITY_KEY",
    "DEFAULT_MAX_BYTES",
    "STREAM_INTERVAL_S",
    "WEB_CAPABILITIES",
    "BrowserChat",
    "ChannelNotStartedError",
    "ChatFeed",
    "Cursor",
    "Delivery",
    "MessageRefusedError",
    "PersonServices",
    "ReplyTimeoutError",
    "WebChatAdapter",
    "activity_label",
    "plain_html",
    "render_html",
    "sanitise_html",
]
