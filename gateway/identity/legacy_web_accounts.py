"""Re-keying a home written by earlier versions, whose web chat accounts were the browsers' raw cookies.

Invariants: it runs when the gateway starts, before the web chat serves a request; in ONE write
transaction every raw cookie in state.db — as an account id, in session keys, chat references, event ids
and the keys derived from them — becomes the cookie's keyed hash (``ClientKey.web_account``), so the
browser still holding that cookie reaches the same person and conversation while state.db no longer
contains the cookie; ids already hashed are left alone, so running it again changes nothing.
"""

from __future__ import annotations

import logging
import re
import sqlite3

from agent_core.storage.sqlite import StateStore
from gateway.identity.client_key import ClientKey, is_web_account
from gateway.sessions import KeyScope, SessionKey
from gateway.storage.sqlite import persons as rows

_LOG = logging.getLogger("mnemogate.identity")
# What earlier versions accepted as a cookie (and so stored as the account id).
_LEGACY_COOKIE = re.compile(r"[A-Za-z0-9_-]{16,64}")


async def rekey_legacy_web_accounts(state: StateStore, key: ClientKey, platform: str = "web") -> int:
    """Replace raw cookies by their keyed hashes everywhere in state.db; returns how many were found."""

    def legacy_accounts(conn: sqlite3.Connection) -> list[str]:
        return sorted(
            account
            for account in rows.platform_account_ids(conn, platform)
            if not is_web_account(account) and _LEGACY_COOKIE.fullmatch(account)
        )

    def rekey(conn: sqlite3.Connection) -> int:
        legacy = legacy_accounts(conn)
        renames: dict[str, str] = {}
        for old in legacy:
            new = key.web_account(old)
            renames[old] = new
            renames[_in_session_key(platform, old)] = _in_session_key(platform, new)
        rows.rename_account_ids(conn, renames)
        return len(legacy)

    # Every start after the first finds nothing: look on a reader, and take the write lock only for work.
    if not await state.run_read(legacy_accounts):
        return 0
    count = await state.run_write(rekey)
    if count:
        _LOG.info("web chat: %d account(s) keyed by a raw cookie now keyed by its hash", count)
    return count


def _in_session_key(platform: str, chat_id: str) -> str:
    """``chat_id`` as it appears inside a session key (percent-escaped)."""
    return SessionKey(platform=platform, scope=KeyScope.DM, chat_id=chat_id).to_string().split(":")[3]
