"""The identity tables on SQLite: a release-0.1 database from before link codes and pairing (version 2) gains
them on upgrade and keeps its people, who can then link accounts and ask for pairing.

(Seeded with SQL as release 0.1 wrote it, so it lives with the backend; the identity tables at 0.1's last
version: tests/gateway/identity/test_identity_state.py.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gateway.contracts import UserRef
from gateway.identity import Accounts, Pairing
from gateway.storage.sqlite import SqliteStorage, open_state_store
from tests.storage.release_0_1 import create_database


async def test_a_version_2_database_gains_identity_tables_and_keeps_its_people(home: Path) -> None:
    # Release 0.1 at version 2: persons and accounts exist, link codes and pairing requests do not yet.
    create_database(home / "state.db", 2)
    conn = sqlite3.connect(home / "state.db")
    with conn:
        conn.execute("INSERT INTO persons(id, display_name, created_at) VALUES ('p_old', 'Old', 1)")
        conn.execute(
            "INSERT INTO accounts(platform, account_id, person_id, created_at) "
            "VALUES ('slack', 'U1', 'p_old', 1)"
        )
    conn.close()

    async with open_state_store(home) as store:
        accounts = Accounts(SqliteStorage(store).identity)
        assert (await accounts.person_for(UserRef("slack", "U1"))).person_id == "p_old"
        code = await accounts.issue_link_code(await accounts.person_for(UserRef("slack", "U1")))
        assert (await accounts.redeem_link_code(code, UserRef("web", "c1"))).person_id == "p_old"
        assert (await Pairing(SqliteStorage(store).pairing).request(UserRef("telegram", "9"))).issued
