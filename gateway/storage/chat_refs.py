"""ChatRef <-> the one string form each backend stores for a chat (turn_jobs.chat_ref, outbox.chat_ref).

Invariant: the string is canonical (sorted keys, no title), so equal chats give equal strings and the
outbox can order deliveries per chat by comparing them.
"""

from __future__ import annotations

import json

from gateway.contracts import ChatKind, ChatRef


def chat_to_text(chat: ChatRef) -> str:
    payload = {
        "platform": chat.platform,
        "chat_id": chat.chat_id,
        "kind": chat.kind.value,
        "workspace": chat.workspace,
        "thread_id": chat.thread_id,
    }
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def chat_from_text(text: str) -> ChatRef:
    data = json.loads(text)
    return ChatRef(
        platform=str(data["platform"]),
        chat_id=str(data["chat_id"]),
        kind=ChatKind(data["kind"]),
        workspace=data.get("workspace"),
        thread_id=data.get("thread_id"),
    )
