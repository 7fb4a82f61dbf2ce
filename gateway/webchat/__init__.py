"""The embedded web chat and API channels: adapters whose "platform" is this gateway's own HTTP server."""

from gateway.webchat.adapter import ANSWER_KINDS, WEB_CAPABILITIES, PendingReply, Reply, WebChatAdapter
from gateway.webchat.browser import ACTIVITY_KEY, STREAM_INTERVAL_S, BrowserChat, activity_label
from gateway.webchat.errors import ChannelNotStartedError, MessageRefusedError, ReplyTimeoutError
from gateway.webchat.feed import DEFAULT_MAX_BYTES, ChatFeed, Cursor, Delivery
from gateway.webchat.person_services import PersonServices
from gateway.webchat.rendering import plain_html, render_html, sanitise_html
from gateway.webchat.sequence import ChatSequence, Slot

__all__ = [
    "ACTIVITY_KEY",
    "ANSWER_KINDS",
    "DEFAULT_MAX_BYTES",
    "STREAM_INTERVAL_S",
    "WEB_CAPABILITIES",
    "BrowserChat",
    "ChannelNotStartedError",
    "ChatFeed",
    "ChatSequence",
    "Cursor",
    "Delivery",
    "MessageRefusedError",
    "PendingReply",
    "PersonServices",
    "Reply",
    "ReplyTimeoutError",
    "Slot",
    "WebChatAdapter",
    "activity_label",
    "plain_html",
    "render_html",
    "sanitise_html",
]
