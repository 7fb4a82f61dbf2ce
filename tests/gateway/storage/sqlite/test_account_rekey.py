"""Re-keying an account on SQLite: every row of every table that mentioned the old id names the new one, the
conversation is still found by its (rewritten) key, the old bytes are gone from the files, and the database
passes its integrity check."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from agent_core.storage import NewMessage, Principal
from agent_core.storage.sqlite import StateStore
from gateway.storage.sqlite import SqliteStorage, open_state_store

OLD = "Aa-legacyCookie0123456789"
NEW = "h.0123456789abcdef0123456789abcdef"
OLD_IN_KEY, NEW_IN_KEY = OLD.replace("-", "%2D"), NEW  # a session key escapes "-"
KEY = f"web:-:dm:{OLD_IN_KEY}:-:-"


def _forms(account_id: str) -> dict[str, str]:
    return {OLD: NEW, OLD_IN_KEY: NEW_IN_KEY} if account_id == OLD else {}


async def _mention_everywhere(state: StateStore) -> str:
    """What an old release kept for a browser: its cookie as account, chat, key, event and link user."""
    storage = SqliteStorage(state)
    principal = Principal(person_id="p_x", platform="web", user_id=OLD, chat_id=OLD, chat_type="dm")
    conversation = await state.ensure_conversation(KEY, principal)
    tip = await state.resolve_tip(conversation.id)
    await state.append_message(tip.id, NewMessage("user", "hello", platform_message_id=f"{OLD}:m1"))
    issuer = await storage.identity.ensure_account("telegram", "1", None)
    await storage.identity.issue_link_code(
        issuer, ttl_s=600, per_window=5, window_s=3600, new_code=lambda: "CODE2345"
    )
    await storage.identity.redeem_link_code("CODE2345", "web", OLD)  # the account, and link_codes.used_by
    await storage.pairing.open_request(
        "web", OLD, None, per_window=5, window_s=3600, new_code=lambda: "PAIR2345"
    )
    await storage.pairing.claim_notice("web", OLD, "not_allowed", interval_s=3600)
    await state.run_write(
        lambda c: c.execute(
            "INSERT INTO inbound_events(platform, event_id, received_at) VALUES ('web', ?, ?)",
            (f"{OLD}:e1", time.time()),
        )
    )
    return conversation.id


def _mentions(conn: sqlite3.Connection, needle: str) -> list[tuple[str, str]]:
    """(table, column) of every text value in the database that contains ``needle``."""
    found = []
    tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE '%VIRTUAL%'")
    for (table,) in tables.fetchall():
        for column in [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]:
            query = f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{column}" AS TEXT), ?) > 0'
            if conn.execute(query, (needle,)).fetchone()[0]:
                found.append((table, column))
    return found


def _stored_bytes(home: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(home.glob("state.db*")) if path.is_file())


async def test_an_old_id_is_rewritten_in_every_table_and_leaves_no_bytes(tmp_path: Path) -> None:
    async with open_state_store(tmp_path) as state:
        conversation_id = await _mention_everywhere(state)
        before = await state.run_read(lambda c: _mentions(c, OLD) + _mentions(c, OLD_IN_KEY))
        assert {table for table, _ in before} >= {
            "accounts",
            "access_notices",
            "pairing_requests",
            "link_codes",
            "conversations",
            "sessions",
            "messages",
            "inbound_events",
        }
        assert await SqliteStorage(state).identity.rekey_accounts("web", _forms) == 1
        assert await state.run_read(lambda c: _mentions(c, OLD) + _mentions(c, OLD_IN_KEY)) == []
        live = await state.live_conversation(f"web:-:dm:{NEW_IN_KEY}:-:-")
        assert live is not None and live.id == conversation_id
        assert await SqliteStorage(state).identity.rekey_accounts("web", _forms) == 0

    data = _stored_bytes(tmp_path)
    for form in (OLD, OLD_IN_KEY):
        assert form.encode() not in data, form
    with sqlite3.connect(tmp_path / "state.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
