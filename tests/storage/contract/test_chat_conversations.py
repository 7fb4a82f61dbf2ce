"""The chat-window port on every backend: a chat's conversations, its live window with the commands that
asked for its notices, renaming, and reopening an older conversation without breaking its identity."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agent_core.actor import Actor
from agent_core.storage.records import NewMessage, Principal
from gateway.queue import QUEUE_WHEN_BUSY
from gateway.storage.chat_conversations import SWITCHED, ChatConversations, Reopened
from gateway.storage.outbox import OutboxEntry
from gateway.storage.queue import TurnRequest

if TYPE_CHECKING:
    from gateway.storage import Storage

HOUR = 3600.0


def key(chat: str) -> str:
    return f"web:-:dm:{chat}:-:-"


def prefix(chat: str) -> str:
    return f"web:-:dm:{chat}:"


def chats(storage: Storage) -> ChatConversations:
    return storage.chats


def principal(chat: str) -> Principal:
    return Principal(person_id=f"p-{chat}", platform="web", user_id=chat, chat_id=chat, chat_type="dm")


async def said(storage: Storage, segment_id: str, *texts: str, at: float | None = None) -> None:
    for text in texts:
        await storage.agent.append_message(segment_id, NewMessage(role="user", content=text, created_at=at))
        reply = NewMessage(role="assistant", content=f"re: {text}", created_at=at)
        await storage.agent.append_message(segment_id, reply)


async def test_a_chat_lists_its_own_conversations_live_first_titled_by_their_first_message(
    storage: Storage,
) -> None:
    older = await storage.agent.ensure_conversation(key("ada"), principal("ada"))
    await said(storage, older.tip_session_id, "plan the trip", "and the budget")
    live = await storage.agent.start_new_conversation(key("ada"), principal("ada"))
    await said(storage, live.tip_session_id, "a new topic")
    await storage.agent.start_new_conversation(key("ada"), principal("ada"))  # ended empty: not listed
    await storage.agent.start_new_conversation(key("ada"), principal("ada"))
    other = await storage.agent.ensure_conversation(key("bob"), principal("bob"))
    await said(storage, other.tip_session_id, "bob's secret")

    listed = await chats(storage).conversations(prefix("ada"))

    assert [c.first_message for c in listed] == [None, "a new topic", "plan the trip"]
    assert [c.live for c in listed] == [True, False, False]
    assert [c.user_messages for c in listed] == [0, 1, 2]
    assert listed[1].last_active_at >= listed[2].last_active_at
    assert all(c.title is None for c in listed)


async def test_renaming_sets_a_clean_title_only_within_the_chat(storage: Storage) -> None:
    mine = await storage.agent.ensure_conversation(key("ada"), principal("ada"))
    await said(storage, mine.tip_session_id, "hello")

    renamed = await chats(storage).rename(prefix("ada"), mine.id, "  Trip\n to   Rome ")
    refused = await chats(storage).rename(prefix("bob"), mine.id, "hijacked")
    titles = [c.title for c in await chats(storage).conversations(prefix("ada"))]
    await chats(storage).rename(prefix("ada"), mine.id, "   ")
    cleared = [c.title for c in await chats(storage).conversations(prefix("ada"))]

    assert (renamed, refused) == (True, False)
    assert titles == ["Trip to Rome"]
    assert cleared == [None]


async def test_reopening_makes_an_older_conversation_live_again_with_its_tip_and_frozen_prompt(
    storage: Storage,
) -> None:
    older = await storage.agent.ensure_conversation(key("ada"), principal("ada"))
    prompt = await storage.agent.freeze_system_prompt(older.tip_session_id, "the prompt of that day")
    await said(storage, older.tip_session_id, "plan the trip")
    newer = await storage.agent.start_new_conversation(key("ada"), principal("ada"))
    await said(storage, newer.tip_session_id, "something else")

    reopened = await chats(storage).reopen(prefix("ada"), older.id)
    again = await chats(storage).reopen(prefix("ada"), older.id)
    stranger = await chats(storage).reopen(prefix("bob"), newer.id)

    assert reopened == Reopened(older.id, ended=newer.id)
    assert again == Reopened(older.id, ended=None)
    assert stranger is None
    live = await storage.agent.live_conversation(key("ada"))
    assert live is not None and live.id == older.id and live.tip_session_id == older.tip_session_id
    tip = await storage.agent.resolve_tip(older.id)
    assert (tip.id, tip.system_prompt, tip.ended_at) == (older.tip_session_id, prompt, None)
    assert len(await storage.agent.segments(older.id)) == 1  # no segment made, the chain untouched
    left = await storage.agent.get_conversation(newer.id)
    assert left is not None and left.ended_at is not None and left.end_reason == SWITCHED
    await said(storage, tip.id, "back to the trip")
    window = await chats(storage).window(prefix("ada"), "web:dm:ada", limit=50)
    assert window.conversation_id == older.id
    contents = [row.content for row in window.transcript]
    assert contents == ["plan the trip", "re: plan the trip", "back to the trip", "re: back to the trip"]


async def test_a_reopened_conversation_is_not_ended_as_idle_for_the_quiet_before_it_was_reopened(
    storage: Storage,
) -> None:
    long_ago = time.time() - HOUR
    older = await storage.agent.ensure_conversation(key("ada"), principal("ada"))
    await said(storage, older.tip_session_id, "an old question", at=long_ago)
    await storage.agent.start_new_conversation(key("ada"), principal("ada"))
    idle = await storage.agent.ensure_conversation(key("cy"), principal("cy"))
    await said(storage, idle.tip_session_id, "quiet for an hour", at=long_ago)

    await chats(storage).reopen(prefix("ada"), older.id)
    continued = await storage.queue.enqueue(turn("ada", "still about it?", "e1"), QUEUE_WHEN_BUSY)
    quiet = await storage.queue.enqueue(turn("cy", "hello again", "e2"), QUEUE_WHEN_BUSY)

    assert (continued.conversation_id, continued.ended_idle) == (older.id, None)
    assert quiet.ended_idle == idle.id  # the rule itself: an hour of silence ends it


def turn(chat: str, text: str, event: str) -> TurnRequest:
    return TurnRequest(
        actor=Actor(person_id=f"p-{chat}", platform="web", account_id=chat),
        event_id=event,
        session_key=key(chat),
        principal=principal(chat),
        chat_ref=f"web:dm:{chat}",
        reply_to=event,
        message=NewMessage(role="user", content=text, author=f"p-{chat}"),
        idle_after_s=60.0,
    )


async def test_the_window_shows_each_command_with_its_reply_in_the_conversation_it_ran_in(
    storage: Storage,
) -> None:
    first = await storage.agent.ensure_conversation(key("ada"), principal("ada"))
    await said(storage, first.tip_session_id, "hello")
    await storage.outbox.add(notice("cmd:1", "Conversation: first", first.id, request_text="/status"))
    await storage.outbox.add(notice("deny:1", "an unfiled notice", ""))
    second = await storage.agent.start_new_conversation(key("ada"), principal("ada"))
    await storage.outbox.add(notice("cmd:2", "Started a new conversation.", second.id, request_text="/new"))

    now_second = await chats(storage).window(prefix("ada"), "web:dm:ada", limit=50)
    await chats(storage).reopen(prefix("ada"), first.id)
    back_to_first = await chats(storage).window(prefix("ada"), "web:dm:ada", limit=50)

    assert [(n.request_text, n.notice.text, n.key) for n in now_second.notices] == [
        ("/new", "Started a new conversation.", "cmd:2")
    ]
    assert [(n.request_text, n.notice.text) for n in back_to_first.notices] == [
        ("/status", "Conversation: first")
    ]
    assert [row.content for row in back_to_first.transcript] == ["hello", "re: hello"]


def notice(
    idempotency_key: str, text: str, conversation_id: str, *, request_text: str | None = None
) -> OutboxEntry:
    return OutboxEntry(
        conversation_id=conversation_id,
        platform="web",
        chat_ref="web:dm:ada",
        text=text,
        idempotency_key=idempotency_key,
        kind="command" if request_text else "denied",
        request_text=request_text,
    )
