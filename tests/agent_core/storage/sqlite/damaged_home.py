"""Homes with real data and real damage, for the damaged-state tests (store, runtime and e2e).

The damage is what a failing disk or a bad copy does: bytes of whole pages in the middle of state.db
replaced while no process has it open.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from agent_core.storage import NewMessage, Principal
from agent_core.storage.sqlite import StateSettings, StateStore

FILLER = "lorem ipsum dolor sit amet " * 12


async def home_with_messages(home: Path, *, conversations: int = 8, messages: int = 150) -> list[str]:
    """Write ``conversations`` x ``messages`` user messages, searchable; returns the conversation ids."""
    ids = []
    async with StateStore(home) as store:
        for n in range(conversations):
            conversation = await store.ensure_conversation(f"key{n}", Principal(person_id=f"person{n}"))
            await store.append_messages(
                conversation.tip_session_id,
                [NewMessage("user", f"note{n}x{i} {FILLER}") for i in range(messages)],
            )
            ids.append(conversation.id)
        assert await store.wait_indexed(20)
    return ids


def damage_middle_pages(db: Path, pages: int = 2) -> int:
    """Overwrite ``pages`` whole pages in the middle of a closed database; returns the byte offset."""
    with sqlite3.connect(db) as conn:
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    conn.close()
    total_pages = db.stat().st_size // page_size
    assert total_pages > 20, "the database is too small to have a middle"
    offset = (total_pages // 2) * page_size
    with db.open("r+b") as handle:
        handle.seek(offset)
        handle.write(random.Random(7).randbytes(page_size * pages))
    return offset


def unchecked_settings(**overrides: object) -> StateSettings:
    """Settings that skip the start-up integrity check, to exercise what happens to damage at run time."""
    return StateSettings.model_validate({"integrity_check_s": 0, **overrides})
