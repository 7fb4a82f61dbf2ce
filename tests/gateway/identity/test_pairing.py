"""Pairing requests: one code per account, a per-platform hourly budget, and admin decisions."""

from __future__ import annotations

import pytest

from agent_core.storage.sqlite import StateStore
from gateway.contracts import UserRef
from gateway.identity import ALPHABET, Pairing, PairingError, PairingState
from gateway.storage.sqlite.pairing import SqlitePairing
from tests.gateway.conftest import ManualClock


def user(n: int, platform: str = "telegram") -> UserRef:
    return UserRef(platform, str(n), display_name=f"user {n}")


async def test_an_account_gets_one_code_and_resending_returns_it(
    state: StateStore, clock: ManualClock
) -> None:
    pairing = Pairing(SqlitePairing(state, clock=clock))
    first = await pairing.request(user(1))
    clock.advance(120)
    again = await pairing.request(user(1))
    assert first.issued and not again.issued
    assert first.request is not None and again.request is not None
    assert again.request.code == first.request.code
    assert len(first.request.code) == 8 and set(first.request.code) <= set(ALPHABET)
    assert first.request.state is PairingState.PENDING and first.request.display_name == "user 1"
    pending = await pairing.list_pending()
    assert [(r.platform, r.account_id) for r in pending] == [("telegram", "1")]


async def test_new_codes_are_capped_per_platform_per_hour(state: StateStore, clock: ManualClock) -> None:
    pairing = Pairing(SqlitePairing(state, clock=clock), codes_per_hour=3)
    for n in range(3):
        assert (await pairing.request(user(n))).issued
        clock.advance(10)
    refused = await pairing.request(user(99))
    assert refused.request is None and not refused.issued
    assert refused.retry_after_s == pytest.approx(3600 - 30)
    # Another platform has its own budget; an account that already has a code still gets it back.
    assert (await pairing.request(user(99, "discord"))).issued
    assert (await pairing.request(user(0))).request is not None
    clock.advance(3600 - 30)
    assert (await pairing.request(user(99))).issued


async def test_approve_admits_and_deny_revokes(state: StateStore, clock: ManualClock) -> None:
    pairing = Pairing(SqlitePairing(state, clock=clock))
    ticket = await pairing.request(user(5))
    assert ticket.request is not None
    code = ticket.request.code
    assert not await pairing.is_approved(user(5))

    approved = await pairing.approve(code.lower(), by="cli")
    assert approved.state is PairingState.APPROVED and approved.decided_by == "cli"
    assert approved.decided_at == clock.now
    assert await pairing.is_approved(user(5))
    assert not await pairing.is_approved(user(5, "slack"))
    assert await pairing.list_pending() == []

    denied = await pairing.deny(code)
    assert denied.state is PairingState.DENIED
    assert not await pairing.is_approved(user(5))
    # A denied account keeps its one request: asking again issues no new code.
    again = await pairing.request(user(5))
    assert not again.issued and again.request is not None and again.request.state is PairingState.DENIED


async def test_decisions_on_unknown_or_decided_codes_are_clear_errors(state: StateStore) -> None:
    pairing = Pairing(SqlitePairing(state))
    ticket = await pairing.request(user(1))
    assert ticket.request is not None
    with pytest.raises(PairingError, match="no pairing request has code ZZZZZZZZ") as unknown:
        await pairing.approve("ZZZZZZZZ")
    assert isinstance(unknown.value, LookupError)  # the admin API answers 404
    with pytest.raises(PairingError, match="not a pairing code"):
        await pairing.deny("nope")
    await pairing.approve(ticket.request.code)
    with pytest.raises(PairingError, match="already approved") as decided:
        await pairing.approve(ticket.request.code)
    assert isinstance(decided.value, ValueError)
