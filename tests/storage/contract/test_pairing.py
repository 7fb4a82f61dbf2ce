"""The pairing port on every backend: one request per account, a per-platform code budget that two
processes cannot overshoot, approve/deny decisions with who and when, and notices at most once per
interval."""

from __future__ import annotations

import asyncio
import itertools
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from gateway.storage.pairing import PairingRepository, PairingState, PairingTicket

from .backends import BackendUnderTest, open_storage
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_HOUR_S = 3600.0


def repo(storage: Storage) -> PairingRepository:
    return storage.pairing


async def ask(
    pairing: PairingRepository, account: str, platform: str = "telegram", *, per_window: int = 5
) -> PairingTicket:
    return await pairing.open_request(
        platform,
        account,
        f"user {account}",
        per_window=per_window,
        window_s=_HOUR_S,
        new_code=lambda: f"{platform}-{account}",  # a code per account; the port stores what it is given
    )


def code_of(ticket: PairingTicket) -> str:
    assert ticket.request is not None
    return ticket.request.code


async def test_an_account_has_one_request_and_asking_again_returns_it(storage: Storage) -> None:
    pairing = repo(storage)
    first = await ask(pairing, "2")
    again = await ask(pairing, "2")
    assert first.issued and not again.issued
    assert first.request is not None and again.request == first.request
    assert (first.request.platform, first.request.account_id, first.request.display_name) == (
        "telegram",
        "2",
        "user 2",
    )
    assert first.request.state is PairingState.PENDING and first.request.decided_at is None
    assert await pairing.get(code_of(first)) == first.request
    assert await pairing.get("NONE2345") is None


async def test_new_codes_are_capped_per_platform(storage: Storage) -> None:
    pairing = repo(storage)
    for account in ("2", "3", "4"):
        assert (await ask(pairing, account, per_window=3)).issued
    refused = await ask(pairing, "5", per_window=3)
    assert refused.request is None and not refused.issued and 0 < refused.retry_after_s <= _HOUR_S
    # Another platform has its own budget; an account that has a code still gets it back.
    assert (await ask(pairing, "5", "discord", per_window=3)).issued
    assert (await ask(pairing, "2", per_window=3)).request is not None
    assert len(await pairing.list_requests(PairingState.PENDING)) == 4


def _open_many(spec: str, accounts: list[str], start: Barrier, out: Queue[int]) -> None:
    async def run() -> int:
        async with open_storage(spec) as storage:
            start.wait(timeout=60)
            tickets = [await ask(storage.pairing, account, per_window=5) for account in accounts]
            return sum(ticket.issued for ticket in tickets)

    out.put(asyncio.run(run()))


def test_two_processes_cannot_overshoot_the_budget(backend: BackendUnderTest) -> None:
    halves = (["2", "3", "4", "5", "6"], ["7", "8", "9", "22", "23"])
    issued = run_together(_open_many, [(backend.spec, half) for half in halves])
    assert sum(issued) == 5


async def test_approve_admits_and_deny_revokes(storage: Storage) -> None:
    pairing = repo(storage)
    code = code_of(await ask(pairing, "5"))
    assert not await pairing.is_approved("telegram", "5")

    approved = await pairing.decide(code, PairingState.APPROVED, "cli")
    assert approved is not None and approved.previous is PairingState.PENDING
    assert (approved.request.state, approved.request.decided_by) == (PairingState.APPROVED, "cli")
    assert approved.request.decided_at is not None
    assert approved.request.decided_at >= approved.request.created_at
    assert await pairing.is_approved("telegram", "5")
    assert not await pairing.is_approved("slack", "5")
    assert await pairing.list_requests(PairingState.PENDING) == ()

    denied = await pairing.decide(code, PairingState.DENIED, "admin")
    assert denied is not None and denied.previous is PairingState.APPROVED
    assert not await pairing.is_approved("telegram", "5")
    again = await ask(pairing, "5")
    assert not again.issued and again.request is not None and again.request.state is PairingState.DENIED


async def test_deciding_the_same_again_changes_nothing_and_unknown_codes_are_none(
    storage: Storage,
) -> None:
    pairing = repo(storage)
    code = code_of(await ask(pairing, "5"))
    first = await pairing.decide(code, PairingState.APPROVED, "cli")
    second = await pairing.decide(code, PairingState.APPROVED, "someone else")
    assert first is not None and second is not None
    assert second.previous is PairingState.APPROVED and second.request == first.request
    assert await pairing.decide("NONE2345", PairingState.APPROVED, "cli") is None


async def test_requests_are_listed_oldest_first_by_state(storage: Storage) -> None:
    pairing = repo(storage)
    codes = [code_of(await ask(pairing, account)) for account in ("2", "3", "4")]
    await pairing.decide(codes[1], PairingState.DENIED, "cli")
    assert [r.code for r in await pairing.list_requests()] == codes
    assert [r.code for r in await pairing.list_requests(PairingState.PENDING)] == [codes[0], codes[2]]
    assert [r.code for r in await pairing.list_requests(PairingState.DENIED)] == [codes[1]]
    assert await pairing.list_requests(PairingState.APPROVED) == ()


async def test_a_notice_is_claimed_once_per_interval_and_kind(storage: Storage) -> None:
    pairing = repo(storage)
    assert await pairing.claim_notice("telegram", "5", "not_allowed", interval_s=_HOUR_S)
    assert not await pairing.claim_notice("telegram", "5", "not_allowed", interval_s=_HOUR_S)
    assert await pairing.claim_notice("telegram", "5", "pairing_busy", interval_s=_HOUR_S)
    assert await pairing.claim_notice("telegram", "6", "not_allowed", interval_s=_HOUR_S)
    assert await pairing.claim_notice("slack", "5", "not_allowed", interval_s=_HOUR_S)
    # Once the interval has passed (here: an interval of nothing) the notice may go again.
    assert await pairing.claim_notice("telegram", "5", "not_allowed", interval_s=0.0)
    assert not await pairing.claim_notice("telegram", "5", "not_allowed", interval_s=_HOUR_S)


async def test_concurrent_claims_of_one_notice_send_it_once(storage: Storage) -> None:
    pairing = repo(storage)
    claims = await asyncio.gather(
        *(pairing.claim_notice("telegram", "5", "not_allowed", interval_s=_HOUR_S) for _ in range(10))
    )
    assert sorted(claims) == [False] * 9 + [True]


async def test_a_colliding_code_is_drawn_again(storage: Storage) -> None:
    pairing = repo(storage)
    drawn = itertools.chain(["SAME2345"], ["SAME2345", "NEXT2345"])
    tickets = [
        await pairing.open_request(
            "telegram", account, None, per_window=5, window_s=_HOUR_S, new_code=lambda: next(drawn)
        )
        for account in ("2", "3")
    ]
    assert [code_of(ticket) for ticket in tickets] == ["SAME2345", "NEXT2345"]
