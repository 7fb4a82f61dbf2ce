"""The identity port on every backend: one person per account (also when two processes see it first at
once), link codes that work once and expire, only the newest code open, a per-person issue budget, and
re-keying of account ids that reaches every mention and is idempotent."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from gateway.storage.identity import IdentityRepository, RedeemStatus

from .backends import BackendUnderTest, open_storage
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_HOUR_S = 3600.0


def repo(storage: Storage) -> IdentityRepository:
    return storage.identity


async def issue(identity: IdentityRepository, person_id: str, code: str, *, ttl_s: float = 600.0) -> str:
    issued = await identity.issue_link_code(
        person_id, ttl_s=ttl_s, per_window=100, window_s=_HOUR_S, new_code=lambda: code
    )
    assert issued.code == code
    return code


async def test_an_account_keeps_the_person_it_was_created_with(storage: Storage) -> None:
    identity = repo(storage)
    assert await identity.account_person("telegram", "1") is None
    assert await identity.account_person("telegram", "1") is None  # looking creates nothing
    ada = await identity.ensure_account("telegram", "1", "Ada")
    assert await identity.ensure_account("telegram", "1", "Ada") == ada
    assert await identity.account_person("telegram", "1") == ada
    other = await identity.ensure_account("slack", "1", None)
    assert other != ada
    assert [(a.platform, a.account_id, a.person_id) for a in await identity.accounts_of(ada)] == [
        ("telegram", "1", ada)
    ]
    assert await identity.accounts_of("p_nobody") == ()


async def test_concurrent_first_sights_of_one_account_make_one_person(storage: Storage) -> None:
    identity = repo(storage)
    people = await asyncio.gather(*(identity.ensure_account("web", "h.1", None) for _ in range(20)))
    assert len(set(people)) == 1
    assert len(await identity.accounts_of(people[0])) == 1


def _resolve_many(spec: str, barrier: Barrier, out: Queue[list[str]]) -> None:
    async def run() -> list[str]:
        async with open_storage(spec) as storage:
            barrier.wait(timeout=60)
            return [await storage.identity.ensure_account("telegram", str(n), None) for n in range(30)]

    out.put(asyncio.run(run()))


def test_two_processes_seeing_the_same_new_accounts_agree_on_their_persons(backend: BackendUnderTest) -> None:
    results = run_together(_resolve_many, [(backend.spec,)] * 2)
    assert results[0] == results[1]
    assert len(set(results[0])) == 30


async def test_a_link_code_joins_one_account_once(storage: Storage) -> None:
    identity = repo(storage)
    ada = await identity.ensure_account("telegram", "1", "Ada")
    code = await issue(identity, ada, "CODE2345")

    linked = await identity.redeem_link_code(code, "slack", "U1")
    assert (linked.status, linked.person_id, linked.previous_person_id) == (RedeemStatus.LINKED, ada, None)
    assert await identity.account_person("slack", "U1") == ada
    owned = {(a.platform, a.account_id) for a in await identity.accounts_of(ada)}
    assert owned == {("telegram", "1"), ("slack", "U1")}

    again = await identity.redeem_link_code(code, "discord", "666")
    assert again.status is RedeemStatus.USED
    assert await identity.account_person("discord", "666") is None


async def test_redeeming_moves_a_known_account_and_names_its_previous_person(storage: Storage) -> None:
    identity = repo(storage)
    ada = await identity.ensure_account("telegram", "1", "Ada")
    before = await identity.ensure_account("slack", "U1", "ada")
    outcome = await identity.redeem_link_code(await issue(identity, ada, "CODE2345"), "slack", "U1")
    assert (outcome.status, outcome.previous_person_id) == (RedeemStatus.LINKED, before)
    assert await identity.account_person("slack", "U1") == ada
    assert await identity.accounts_of(before) == ()


async def test_expired_unknown_and_own_codes_change_nothing(storage: Storage) -> None:
    identity = repo(storage)
    ada = await identity.ensure_account("telegram", "1", "Ada")
    expired = await issue(identity, ada, "OLDC2345", ttl_s=0.0)
    assert (await identity.redeem_link_code(expired, "slack", "U1")).status is RedeemStatus.EXPIRED
    assert (await identity.redeem_link_code("NONE2345", "slack", "U1")).status is RedeemStatus.UNKNOWN
    own = await issue(identity, ada, "OWNC2345")
    same = await identity.redeem_link_code(own, "telegram", "1")
    assert (same.status, same.person_id) == (RedeemStatus.SAME_PERSON, ada)
    assert await identity.account_person("slack", "U1") is None
    # Redeeming your own code used nothing up: the code still links another account.
    assert (await identity.redeem_link_code(own, "slack", "U1")).status is RedeemStatus.LINKED


async def test_only_the_newest_code_of_a_person_is_open(storage: Storage) -> None:
    identity = repo(storage)
    ada = await identity.ensure_account("telegram", "1", "Ada")
    old = await issue(identity, ada, "OLDC2345")
    new = await issue(identity, ada, "NEWC2345")
    assert (await identity.redeem_link_code(old, "slack", "U1")).status is RedeemStatus.USED
    assert (await identity.redeem_link_code(new, "slack", "U1")).status is RedeemStatus.LINKED


async def test_a_voided_code_links_nothing(storage: Storage) -> None:
    identity = repo(storage)
    ada = await identity.ensure_account("telegram", "1", "Ada")
    code = await issue(identity, ada, "CODE2345")
    assert await identity.void_link_code(code, "shown_in_group")
    assert not await identity.void_link_code(code, "shown_in_group")
    assert not await identity.void_link_code("NONE2345", "shown_in_group")
    assert (await identity.redeem_link_code(code, "slack", "U1")).status is RedeemStatus.USED


async def test_a_colliding_code_is_drawn_again(storage: Storage) -> None:
    identity = repo(storage)
    ada = await identity.ensure_account("telegram", "1", "Ada")
    bob = await identity.ensure_account("telegram", "2", "Bob")
    await issue(identity, ada, "SAME2345")
    drawn = iter(("SAME2345", "NEXT2345"))  # what the generator draws, in order
    issued = await identity.issue_link_code(
        bob, ttl_s=600.0, per_window=5, window_s=_HOUR_S, new_code=lambda: next(drawn)
    )
    assert issued.code == "NEXT2345"
    linked = await identity.redeem_link_code("SAME2345", "slack", "U1")
    assert linked.person_id == ada


async def test_issuing_codes_is_budgeted_per_person(storage: Storage) -> None:
    identity = repo(storage)
    ada = await identity.ensure_account("telegram", "1", "Ada")
    bob = await identity.ensure_account("telegram", "2", "Bob")
    drawn = iter(f"C{n}DEFGHJ" for n in range(2, 8))

    async def ask(person_id: str) -> tuple[str | None, float]:
        issued = await identity.issue_link_code(
            person_id, ttl_s=600.0, per_window=2, window_s=_HOUR_S, new_code=lambda: next(drawn)
        )
        return issued.code, issued.retry_after_s

    assert (await ask(ada))[0] and (await ask(ada))[0]
    refused, retry_after_s = await ask(ada)
    assert refused is None and 0 < retry_after_s <= _HOUR_S
    assert (await ask(bob))[0] is not None  # someone else's budget is untouched


async def _mentioned_everywhere(storage: Storage, account: str, code: str) -> str:
    """A web account with a pairing request (``code``) and a notice of its own; its person."""
    person = await storage.identity.ensure_account("web", account, None)
    ticket = await storage.pairing.open_request(
        "web", account, None, per_window=10, window_s=_HOUR_S, new_code=lambda: code
    )
    assert ticket.issued
    assert await storage.pairing.claim_notice("web", account, "not_allowed", interval_s=_HOUR_S)
    return person


async def test_rekeying_renames_an_account_everywhere_and_only_whole_ids(storage: Storage) -> None:
    identity = repo(storage)
    old, near = "cookie-old-2", "cookie-old-22"
    person = await _mentioned_everywhere(storage, old, "PAIR2345")
    neighbour = await _mentioned_everywhere(storage, near, "PAIR2346")

    def forms(account_id: str) -> Mapping[str, str]:
        return {old: "h.new"} if account_id == old else {}

    assert await identity.platform_account_ids("web") == {old, near}
    assert await identity.rekey_accounts("web", forms) == 1

    assert await identity.platform_account_ids("web") == {"h.new", near}
    assert await identity.account_person("web", "h.new") == person
    assert await identity.account_person("web", old) is None
    assert await identity.account_person("web", near) == neighbour
    # Its pairing request and its notice moved with it.
    assert not await storage.pairing.claim_notice("web", "h.new", "not_allowed", interval_s=_HOUR_S)
    assert {r.account_id for r in await storage.pairing.list_requests()} == {"h.new", near}


async def test_rekeying_again_changes_nothing(storage: Storage) -> None:
    identity = repo(storage)
    person = await _mentioned_everywhere(storage, "cookie-a", "PAIR2345")

    def forms(account_id: str) -> Mapping[str, str]:
        return {} if account_id.startswith("h.") else {account_id: f"h.{account_id}"}

    assert await identity.rekey_accounts("web", forms) == 1
    assert await identity.rekey_accounts("web", forms) == 0
    assert await identity.platform_account_ids("web") == {"h.cookie-a"}
    assert (await storage.pairing.get("PAIR2345")) is not None
    assert await identity.account_person("web", "h.cookie-a") == person
    assert await identity.rekey_accounts("web", lambda _: {}) == 0
