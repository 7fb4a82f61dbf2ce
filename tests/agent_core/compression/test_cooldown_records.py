"""Cooldown records in state.db's ``meta`` are forgotten once they can no longer matter, so they stay few."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent_core.compression import Cooldown, CooldownBook
from agent_core.storage.sqlite import NewMessage, NewSegment, Principal, StateStore

PERSON = Principal(person_id="p1", platform="web")


def _cooldown(segment_id: str, until: float, *, notified: bool = False) -> Cooldown:
    return Cooldown(
        segment_id, until, after_message_id=0, turns=2, kind="permanent", reason="auth", notified=notified
    )


def _count(conn: sqlite3.Connection) -> int:
    return int(
        conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'compression.cooldown/%'").fetchone()[0]
    )


async def test_cooldowns_of_ended_conversations_do_not_pile_up(home: Path) -> None:
    async with StateStore(home) as state:
        book = CooldownBook(state)
        for n in range(300):
            conversation = await state.ensure_conversation(f"web:dm:{n}", PERSON)
            await book.put(conversation.id, _cooldown(conversation.tip_session_id, 1000.0 + n))
            await state.end_conversation(conversation.id, "new")
        assert await state.run_read(_count) <= 2


async def test_a_live_cooldown_stays_and_outdated_ones_go(home: Path) -> None:
    async with StateStore(home) as state:
        book = CooldownBook(state)
        live = await state.ensure_conversation("web:dm:live", PERSON)
        compressed = await state.ensure_conversation("web:dm:compressed", PERSON)
        quiet = await state.ensure_conversation("web:dm:quiet", PERSON)
        await book.put(live.id, _cooldown(live.tip_session_id, 5000.0, notified=True))
        await book.put(compressed.id, _cooldown(compressed.tip_session_id, 5000.0))
        await book.put(quiet.id, _cooldown(quiet.tip_session_id, 5000.0 - 2 * 86_400))
        # Someone compressed this conversation: the cooldown was about a segment that is no longer the tip.
        await state.compress(compressed.tip_session_id, NewSegment(), [NewMessage(role="user", content="hi")])
        newcomer = await state.ensure_conversation("web:dm:new", PERSON)
        await book.put(newcomer.id, _cooldown(newcomer.tip_session_id, 5001.0))
        assert await book.get(compressed.id) is None
        assert await book.get(quiet.id) is None  # its time passed more than a day before the newest one's
        kept = await book.get(live.id)
        assert kept is not None and kept.notified  # the person is still told only once
        assert await book.get(newcomer.id) is not None
        assert await state.run_read(_count) == 2
