"""Identity on an upgraded home: the people release 0.1 knew resolve to the same persons, and linking and
pairing work on the database it left.

The home is the dump of one that release 0.1 built (tests/storage/data/state_0_1.sql). How an older database
gains the identity tables: tests/gateway/storage/sqlite/test_identity_migration.py. That processes agree on
persons is a contract test (tests/storage/contract/test_identity.py).
"""

from __future__ import annotations

from pathlib import Path

from gateway.contracts import UserRef
from gateway.identity import Accounts, Pairing
from gateway.storage.sqlite import SqliteStorage, open_state_store
from tests.storage.release_0_1 import load_dump


async def test_the_people_of_a_release_0_1_home_keep_their_persons_and_can_link_and_pair(home: Path) -> None:
    load_dump(home / "state.db")
    async with open_state_store(home) as store:
        storage = SqliteStorage(store)
        accounts = Accounts(storage.identity)
        ada = await accounts.person_for(UserRef("test", "ada"))
        assert ada.person_id == "p_1m8sztfhczf8e4cjq3t"  # as release 0.1 stored it, not a new person
        assert (await accounts.person_for(UserRef("web", "c_browser1"))).person_id == ada.person_id
        code = await accounts.issue_link_code(ada)
        assert (await accounts.redeem_link_code(code, UserRef("slack", "U7"))).person_id == ada.person_id
        assert (await Pairing(storage.pairing).request(UserRef("telegram", "9"))).issued
