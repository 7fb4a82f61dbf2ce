"""Accounts: each platform account resolves to its own person, stably, and admins come from config."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core.storage.sqlite import StateStore
from gateway.contracts import UserRef
from gateway.identity import Accounts
from gateway.storage.sqlite import SqliteStorage, open_state_store
from gateway.storage.sqlite.persons import SqliteIdentity
from tests.gateway.conftest import ManualClock


async def test_a_new_account_gets_a_person_that_stays_the_same(state: StateStore, clock: ManualClock) -> None:
    accounts = Accounts(SqliteIdentity(state, clock=clock))
    ada = UserRef("telegram", "100", display_name="Ada")
    first = await accounts.person_for(ada)
    again = await accounts.person_for(ada)
    assert first.person_id.startswith("p_") and len(first.person_id) > 10
    assert again.person_id == first.person_id
    assert first.display_name == "Ada" and not first.is_admin


async def test_the_same_user_id_on_two_platforms_is_two_people(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    on_telegram = await accounts.person_for(UserRef("telegram", "42"))
    on_slack = await accounts.person_for(UserRef("slack", "42"))
    assert on_telegram.person_id != on_slack.person_id


async def test_find_person_never_creates_one(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    assert await accounts.find_person(UserRef("discord", "7")) is None
    made = await accounts.person_for(UserRef("discord", "7"))
    found = await accounts.find_person(UserRef("discord", "7"))
    assert found is not None and found.person_id == made.person_id


async def test_admin_status_belongs_to_the_configured_account(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state), admins=["telegram:1"])
    assert (await accounts.person_for(UserRef("telegram", "1"))).is_admin
    assert not (await accounts.person_for(UserRef("telegram", "2"))).is_admin
    assert not (await accounts.person_for(UserRef("slack", "1"))).is_admin


async def test_concurrent_first_sight_creates_exactly_one_person(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    user = UserRef("web", "cookie-1")
    people = await asyncio.gather(*(accounts.person_for(user) for _ in range(20)))
    assert len({p.person_id for p in people}) == 1
    assert len(await accounts.accounts_of(people[0].person_id)) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    users=st.lists(
        st.tuples(st.sampled_from(["telegram", "slack", "discord", "web"]), st.text(min_size=1, max_size=12)),
        min_size=1,
        max_size=12,
    )
)
def test_no_account_ever_resolves_to_another_accounts_person(
    tmp_path: Path, users: list[tuple[str, str]]
) -> None:
    """Property: distinct accounts -> distinct persons; each account -> always its own person."""

    async def scenario() -> None:
        home = tmp_path / f"h{abs(hash(tuple(users)))}"
        home.mkdir(exist_ok=True)
        async with open_state_store(home) as store:
            accounts = Accounts(SqliteStorage(store).identity)
            seen: dict[tuple[str, str], str] = {}
            for platform, user_id in users + users[::-1]:
                person = await accounts.person_for(UserRef(platform, user_id))
                assert seen.setdefault((platform, user_id), person.person_id) == person.person_id
            assert len(set(seen.values())) == len(seen)
            for (platform, user_id), person_id in seen.items():
                owned = await accounts.accounts_of(person_id)
                assert [(a.platform, a.account_id) for a in owned] == [(platform, user_id)]

    asyncio.run(scenario())
