"""/link: a code issued on one account joins another account to the same person, once, within 10 minutes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.memory import MemorySettings, MemoryStores
from agent_core.storage.sqlite import StateStore
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.identity import ALPHABET, Accounts, LinkError, LinkSettings
from gateway.storage.sqlite.persons import SqliteIdentity
from tests.gateway.conftest import ManualClock

TELEGRAM = UserRef("telegram", "100", display_name="Ada")
SLACK = UserRef("slack", "U9", display_name="ada")
STRANGER = UserRef("discord", "666")


def dm(user: UserRef, text: str, kind: ChatKind = ChatKind.DM) -> InboundMessage:
    return InboundMessage(
        event_id=text, chat=ChatRef(user.platform, f"chat-{user.user_id}", kind), sender=user, text=text
    )


async def test_a_code_from_telegram_redeemed_on_slack_makes_one_person(
    state: StateStore, clock: ManualClock
) -> None:
    accounts = Accounts(SqliteIdentity(state, clock=clock))
    ada = await accounts.person_for(TELEGRAM)
    code = await accounts.issue_link_code(ada)
    assert 6 <= len(code) <= 8 and set(code) <= set(ALPHABET)

    linked = await accounts.redeem_link_code(code.lower(), SLACK)

    assert linked.person_id == ada.person_id
    assert (await accounts.person_for(SLACK)).person_id == ada.person_id
    assert (await accounts.person_for(TELEGRAM)).person_id == ada.person_id
    owned = {(a.platform, a.account_id) for a in await accounts.accounts_of(ada.person_id)}
    assert owned == {("telegram", "100"), ("slack", "U9")}


async def test_a_used_code_is_refused_the_second_time(state: StateStore, clock: ManualClock) -> None:
    accounts = Accounts(SqliteIdentity(state, clock=clock))
    code = await accounts.issue_link_code(await accounts.person_for(TELEGRAM))
    await accounts.redeem_link_code(code, SLACK)
    with pytest.raises(LinkError, match="already used"):
        await accounts.redeem_link_code(code, STRANGER)
    # The stranger's account did not join Ada.
    stranger = await accounts.person_for(STRANGER)
    assert stranger.person_id != (await accounts.person_for(TELEGRAM)).person_id


async def test_an_expired_code_is_refused_and_links_nothing(state: StateStore, clock: ManualClock) -> None:
    accounts = Accounts(SqliteIdentity(state, clock=clock))
    ada = await accounts.person_for(TELEGRAM)
    code = await accounts.issue_link_code(ada)
    clock.advance(10 * 60 + 1)
    with pytest.raises(LinkError, match="expired"):
        await accounts.redeem_link_code(code, SLACK)
    assert (await accounts.person_for(SLACK)).person_id != ada.person_id


async def test_a_code_still_works_just_before_it_expires(state: StateStore, clock: ManualClock) -> None:
    accounts = Accounts(SqliteIdentity(state, clock=clock))
    ada = await accounts.person_for(TELEGRAM)
    code = await accounts.issue_link_code(ada)
    clock.advance(10 * 60 - 1)
    assert (await accounts.redeem_link_code(code, SLACK)).person_id == ada.person_id


@pytest.mark.parametrize(("typed", "message"), [("ZZZZZZZZ", "not valid"), ("hello!", "not a link code")])
async def test_unknown_or_malformed_codes_get_clear_errors(
    state: StateStore, typed: str, message: str
) -> None:
    accounts = Accounts(SqliteIdentity(state))
    await accounts.issue_link_code(await accounts.person_for(TELEGRAM))
    with pytest.raises(LinkError, match=message):
        await accounts.redeem_link_code(typed, SLACK)


async def test_redeeming_your_own_code_changes_nothing(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    code = await accounts.issue_link_code(await accounts.person_for(TELEGRAM))
    with pytest.raises(LinkError, match="already linked"):
        await accounts.redeem_link_code(code, TELEGRAM)


async def test_a_new_code_voids_the_previous_one(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    ada = await accounts.person_for(TELEGRAM)
    old = await accounts.issue_link_code(ada)
    new = await accounts.issue_link_code(ada)
    with pytest.raises(LinkError, match="already used"):
        await accounts.redeem_link_code(old, SLACK)
    assert (await accounts.redeem_link_code(new, SLACK)).person_id == ada.person_id


async def test_issuing_codes_is_rate_limited_per_person(state: StateStore, clock: ManualClock) -> None:
    accounts = Accounts(SqliteIdentity(state, clock=clock), link=LinkSettings(codes_per_hour=3))
    ada = await accounts.person_for(TELEGRAM)
    for _ in range(3):
        await accounts.issue_link_code(ada)
        clock.advance(60)
    with pytest.raises(LinkError, match=r"try again in about 57 minutes"):
        await accounts.issue_link_code(ada)
    other = await accounts.person_for(SLACK)
    assert await accounts.issue_link_code(other)  # someone else's budget is untouched
    clock.advance(57 * 60)
    assert await accounts.issue_link_code(ada)


async def test_linking_keeps_the_old_persons_memory_and_says_so(home: Path, state: StateStore) -> None:
    memory = MemoryStores(home, MemorySettings())
    accounts = Accounts(SqliteIdentity(state), memory=memory)
    ada = await accounts.person_for(TELEGRAM)
    slack_before = await accounts.person_for(SLACK)
    added = await memory.add(slack_before, target="user", content="Likes oolong")
    assert added.success

    code = await accounts.issue_link_code(ada)
    outcome = await accounts.link(code, SLACK)

    assert outcome.actor.person_id == ada.person_id
    assert outcome.previous_person_id == slack_before.person_id and outcome.previous_has_memory
    assert "kept separately" in outcome.message("slack")
    # Nothing was merged: Ada's store is still empty; the old person's entry is still on disk.
    assert (await memory.entries(person_id=ada.person_id, target="user")).entries == ()
    assert (await memory.entries(person_id=slack_before.person_id, target="user")).entries == (
        "Likes oolong",
    )


async def test_linking_an_account_without_memory_does_not_mention_it(home: Path, state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state), memory=MemoryStores(home, MemorySettings()))
    code = await accounts.issue_link_code(await accounts.person_for(TELEGRAM))
    await accounts.person_for(SLACK)
    outcome = await accounts.link(code, SLACK)
    assert not outcome.previous_has_memory and "kept separately" not in outcome.message("slack")


async def test_the_link_command_issues_and_redeems_in_direct_messages(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    reply = await accounts.handle_link(dm(TELEGRAM, "/link"), "")
    code = reply.split("Your link code is ")[1][:8]
    assert f"/link {code}" in reply and "10 minutes" in reply
    assert (await accounts.handle_link(dm(SLACK, f"/link {code}"), code)).startswith("Linked:")
    assert "already used" in await accounts.handle_link(dm(STRANGER, f"/link {code}"), code)


async def test_the_link_command_refuses_to_show_a_code_in_a_group(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    reply = await accounts.handle_link(dm(TELEGRAM, "/link", ChatKind.GROUP), "")
    assert "direct message" in reply and "code is" not in reply


async def test_a_code_posted_in_a_group_is_voided(state: StateStore) -> None:
    accounts = Accounts(SqliteIdentity(state))
    ada = await accounts.person_for(TELEGRAM)
    code = await accounts.issue_link_code(ada)
    reply = await accounts.handle_link(dm(SLACK, f"/link {code}", ChatKind.GROUP), code)
    assert "no longer works" in reply
    # Anyone who saw it in the group cannot use it afterwards.
    assert "already used" in await accounts.handle_link(dm(STRANGER, f"/link {code}"), code)
    assert (await accounts.person_for(STRANGER)).person_id != ada.person_id
