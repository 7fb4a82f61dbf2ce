"""Delivered outbox rows are pruned after ``delivery.outbox_keep_days`` by the running gateway; nothing
undelivered ever is, the transcripts keep every reply, and a web chat's history loses only command replies and
notices that old. SQLite-specific: the rows are aged by rewriting their timestamps in state.db."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from agent_core.storage.sqlite import StateStore
from gateway.contracts import ChatKind, ChatRef
from gateway.runtime import Runtime
from gateway.storage.chat_refs import chat_to_text
from gateway.storage.sqlite import SqliteStorage
from gateway.storage.sqlite.outbox import add_outbox, mark_failed, mark_sent, record_chunk
from tests.gateway.delivery.recording_adapter import dm
from tests.gateway.queue.harness import backbone, open_config
from tests.gateway.webchat.served_gateway import eventually, idle, served, served_settings

DAY = 86_400.0
PRUNING = {"outbox_keep_days": 1, "outbox_prune_every_s": 0.05}


def _state(runtime: Runtime) -> StateStore:
    """The runtime's state.db (these tests age rows in SQL, so they run on the SQLite backend only)."""
    storage = runtime.storage
    assert isinstance(storage, SqliteStorage), type(storage)
    return storage.state


def _seed(conn: sqlite3.Connection, now: float) -> None:
    """Rows in every state, old and new; "elsewhere" has no adapter here, so its rows stay undelivered."""
    test_chat = chat_to_text(ChatRef("test", "dm-bob", ChatKind.DM))
    other_chat = chat_to_text(ChatRef("elsewhere", "c1", ChatKind.DM))
    for key, platform, chat in [
        ("old-sent", "test", test_chat),
        ("recent-sent", "test", test_chat),
        ("old-failed", "test", test_chat),
        ("old-pending", "elsewhere", other_chat),
        ("old-sending", "elsewhere", other_chat),
    ]:
        add_outbox(
            conn,
            conversation_id="cv",
            platform=platform,
            chat_ref=chat,
            text=key,
            idempotency_key=key,
            kind="notice",
            now=now - 30 * DAY,
        )
    ids = {str(r[1]): int(r[0]) for r in conn.execute("SELECT id, idempotency_key FROM outbox")}
    record_chunk(conn, ids["old-sent"], 0, "m-old", now - 3 * DAY)
    mark_sent(conn, ids["old-sent"], now - 3 * DAY)
    mark_sent(conn, ids["recent-sent"], now - 3600)
    mark_failed(conn, ids["old-failed"], "gave up")
    conn.execute(
        "UPDATE outbox SET state = 'sending', claimed_by = 'another-process', claim_expires_at = ? "
        "WHERE idempotency_key = 'old-sending'",
        (now + 60,),
    )


def _three_days_ago(conn: sqlite3.Connection) -> None:
    for sql in (
        "UPDATE sessions SET started_at = started_at - ?",
        "UPDATE conversations SET created_at = created_at - ?",
        "UPDATE messages SET created_at = created_at - ?",
        "UPDATE outbox SET created_at = created_at - ?, sent_at = sent_at - ?",
    ):
        conn.execute(sql, (3 * DAY,) * sql.count("?"))


def _keys(conn: sqlite3.Connection) -> set[str]:
    return {str(row[0]) for row in conn.execute("SELECT idempotency_key FROM outbox")}


async def test_delivered_rows_go_after_their_keep_time_and_undelivered_ones_stay(home: Path) -> None:
    async with backbone(home, config=open_config(delivery=PRUNING)) as b:
        state = _state(b.runtime)
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        assert await b.wait_sent(1) == ["echo: hello"]
        await b.wait_for(lambda: b.delivery.sent == 1)
        await state.run_write(lambda c: _seed(c, time.time()))
        # The real reply was delivered three days ago, as far as the outbox knows.
        await state.run_write(
            lambda c: c.execute("UPDATE outbox SET sent_at = sent_at - ? WHERE kind = 'reply'", (3 * DAY,))
        )

        async def pruned() -> bool:
            return "old-sent" not in await state.run_read(_keys)

        await eventually(pruned, "the old delivered rows to be pruned")
        kept = await state.run_read(_keys)
        chunks = await state.run_read(lambda c: c.execute("SELECT count(*) FROM outbox_chunks").fetchone()[0])
        transcript = await state.run_read(
            lambda c: [r[0] for r in c.execute("SELECT content FROM messages ORDER BY id")]
        )
    assert kept == {"recent-sent", "old-failed", "old-pending", "old-sending"}
    assert chunks == 0  # the pruned rows' chunk progress went with them
    assert transcript == ["hello", "echo: hello"]  # the reply itself lives on in the transcript


async def test_a_web_chat_history_keeps_its_messages_and_loses_only_old_command_replies(home: Path) -> None:
    async with served(home, served_settings(delivery=PRUNING)) as s, s.browser() as browser:
        await browser.get("/")
        await browser.post("/api/chat/messages", json={"text": "/help"})
        await browser.post("/api/chat/messages", json={"text": "hello"})
        await idle(s)
        # All of that happened three days ago: the conversation, its messages and what was delivered.
        await _state(s.runtime).run_write(_three_days_ago)
        await browser.post("/api/chat/messages", json={"text": "/whoami"})
        await idle(s)

        async def pruned() -> bool:
            old = time.time() - DAY
            sql = "SELECT count(*) FROM outbox WHERE sent_at < ?"
            return int(await _state(s.runtime).run_read(lambda c: c.execute(sql, (old,)).fetchone()[0])) == 0

        await eventually(pruned, "the old delivered rows to be pruned")
        history = (await browser.get("/api/chat/messages")).json()["messages"]
        remaining = await _state(s.runtime).run_read(
            lambda c: c.execute("SELECT count(*) FROM outbox").fetchone()[0]
        )
    texts = [str(item["text"]) for item in history]
    assert texts[:2] == ["hello", "echo: hello"]  # the transcript is untouched
    notices = [item for item in history if item["kind"] == "notice"]
    assert len(notices) == 1 and notices[0] == history[-1]  # /whoami's reply; /help's is gone
    assert "/help" not in texts[-1] and remaining == 1
