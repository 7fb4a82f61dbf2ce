"""AccessControl: who is let in, who is refused, and what a refused person is told (once)."""

from __future__ import annotations

import time
from collections.abc import Callable

from agent_core.storage.sqlite import StateStore
from gateway.access import NOT_ALLOWED, AccessControl, AccessSettings, Admitted, Denied
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.storage.sqlite.pairing import SqlitePairing
from gateway.storage.sqlite.persons import SqliteIdentity
from tests.gateway.conftest import ManualClock


def message(
    platform: str, user_id: str, kind: ChatKind = ChatKind.DM, *, is_bot: bool = False
) -> InboundMessage:
    sender = UserRef(platform, user_id, display_name=f"{platform} {user_id}", is_bot=is_bot)
    return InboundMessage(
        event_id="e", chat=ChatRef(platform, f"c-{user_id}", kind), sender=sender, text="hi"
    )


def settings(**values: object) -> AccessSettings:
    return AccessSettings.model_validate(values)


def access(
    policy: AccessSettings, state: StateStore, clock: Callable[[], float] = time.time
) -> AccessControl:
    """``policy`` over ``state``, with the backend's clock pinned to ``clock``."""
    return AccessControl(policy, SqliteIdentity(state, clock=clock), SqlitePairing(state, clock=clock))


def denied(result: Admitted | Denied) -> Denied:
    assert isinstance(result, Denied), result
    return result


def code_in(notice: str | None) -> str:
    assert notice is not None and "pairing code is " in notice
    return notice.split("pairing code is ")[1][:8]


async def test_web_chat_is_open_by_default_and_each_browser_is_its_own_person(state: StateStore) -> None:
    control = access(AccessSettings(), state)
    one = await control.admit(message("web", "cookie-a"))
    two = await control.admit(message("web", "cookie-b"))
    assert isinstance(one, Admitted) and isinstance(two, Admitted)
    assert one.actor.person_id != two.actor.person_id


async def test_an_unknown_telegram_user_is_denied_by_default_with_one_notice(
    state: StateStore, clock: ManualClock
) -> None:
    control = access(AccessSettings(), state, clock=clock)
    first = await control.admit(message("telegram", "42"))
    second = await control.admit(message("telegram", "42"))
    assert first == Denied(NOT_ALLOWED, "not_allowed")
    assert second == Denied(None, "not_allowed")
    clock.advance(24 * 3600)
    assert await control.admit(message("telegram", "42")) == Denied(NOT_ALLOWED, "not_allowed")
    # A refused sender never becomes a person.
    assert await control.accounts.find_person(UserRef("telegram", "42")) is None


async def test_the_not_allowed_notice_can_be_turned_off(state: StateStore) -> None:
    control = access(settings(denied_notice=False), state)
    assert await control.admit(message("slack", "U1")) == Denied(None, "not_allowed")


async def test_allowlisted_users_and_admins_are_admitted(state: StateStore) -> None:
    control = access(settings(admins=["discord:1"], telegram={"allow": [42]}), state)
    allowed = await control.admit(message("telegram", "42"))
    admin = await control.admit(message("discord", "1"))
    assert isinstance(allowed, Admitted) and not allowed.actor.is_admin
    assert isinstance(admin, Admitted) and admin.actor.is_admin
    assert isinstance(await control.admit(message("telegram", "43")), Denied)
    assert isinstance(await control.admit(message("slack", "42")), Denied)


async def test_a_platform_can_be_opened_and_web_can_be_closed(state: StateStore) -> None:
    control = access(settings(slack={"mode": "open"}, web={"mode": "allowlist", "allow": ["me"]}), state)
    assert isinstance(await control.admit(message("slack", "anyone")), Admitted)
    assert isinstance(await control.admit(message("web", "me")), Admitted)
    assert isinstance(await control.admit(message("web", "someone-else")), Denied)


async def test_refusals_in_groups_and_to_bots_are_silent(state: StateStore) -> None:
    control = access(settings(telegram={"pairing": True}), state)
    assert await control.admit(message("telegram", "7", ChatKind.GROUP)) == Denied(None, "not_allowed")
    assert await control.admit(message("telegram", "8", is_bot=True)) == Denied(None, "not_allowed")
    assert await control.pairing.list_pending() == []


async def test_pairing_gives_one_code_then_approval_admits(state: StateStore, clock: ManualClock) -> None:
    control = access(settings(telegram={"pairing": True}), state, clock=clock)
    first = await control.admit(message("telegram", "42"))
    assert isinstance(first, Denied) and first.reason == "pairing_pending"
    code = code_in(first.notice)
    assert f"mnemogate pair approve {code}" in (first.notice or "")
    assert await control.admit(message("telegram", "42")) == Denied(None, "pairing_pending")
    assert [r.code for r in await control.pairing.list_pending()] == [code]

    await control.pairing.approve(code)
    admitted = await control.admit(message("telegram", "42"))
    assert isinstance(admitted, Admitted)
    # Approval admits that account only, not the same id elsewhere.
    assert isinstance(await control.admit(message("slack", "42")), Denied)


async def test_a_denied_pairing_request_is_refused_without_a_new_code(state: StateStore) -> None:
    control = access(settings(telegram={"pairing": True}), state)
    code = code_in(denied(await control.admit(message("telegram", "42"))).notice)
    await control.pairing.deny(code)
    refused = await control.admit(message("telegram", "42"))
    assert refused == Denied(NOT_ALLOWED, "denied")
    assert await control.admit(message("telegram", "42")) == Denied(None, "denied")
    assert len(await control.pairing.list_requests()) == 1


async def test_pairing_codes_are_rate_limited_per_platform(state: StateStore, clock: ManualClock) -> None:
    control = access(settings(pairing_codes_per_hour=2, telegram={"pairing": True}), state, clock=clock)
    for n in range(2):
        assert denied(await control.admit(message("telegram", str(n)))).reason == "pairing_pending"
    busy = await control.admit(message("telegram", "spammer"))
    assert isinstance(busy, Denied) and busy.reason == "pairing_busy"
    assert busy.notice is not None and "try again in about 60 minutes" in busy.notice
    assert await control.admit(message("telegram", "spammer")) == Denied(None, "pairing_busy")
    assert len(await control.pairing.list_pending()) == 2
    clock.advance(3601)
    later = await control.admit(message("telegram", "spammer"))
    assert isinstance(later, Denied) and later.reason == "pairing_pending" and later.notice is not None
