"""Which conversation an inbound message belongs to: its SessionKey under the platform's scope settings.

Defaults (DESIGN §3): a DM is one conversation per chat; a plain group or channel one per user; a thread
or forum topic one shared conversation. Each platform may override group/thread scope.
"""

from __future__ import annotations

from gateway.contracts import ChatKind, InboundMessage
from gateway.sessions import KeyScope, SessionKey

from .settings import SessionSettings


def session_key_for(message: InboundMessage, settings: SessionSettings) -> SessionKey:
    chat = message.chat
    policy = settings.for_platform(chat.platform)
    user = message.sender.user_id
    if chat.kind is ChatKind.DM:
        return SessionKey(chat.platform, KeyScope.DM, chat.chat_id, chat.workspace)
    if chat.kind is ChatKind.THREAD or chat.thread_id is not None:
        per_user = user if policy.thread == "per_user" else None
        return SessionKey(
            chat.platform, KeyScope.THREAD, chat.chat_id, chat.workspace, chat.thread_id, per_user
        )
    scope = KeyScope.CHANNEL if chat.kind is ChatKind.CHANNEL else KeyScope.GROUP
    per_user = user if policy.group == "per_user" else None
    return SessionKey(chat.platform, scope, chat.chat_id, chat.workspace, None, per_user)
