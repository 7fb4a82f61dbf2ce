"""The adapter-lease port on every backend: one holder at a time, a renewal keeps the lease (and its
generation), a release frees it at once, an expired lease goes to the next claimant with a higher
generation, and processes claiming together (or one that died holding it) never leave two holders."""

from __future__ import annotations

import asyncio
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING

from gateway.storage.adapter_leases import AdapterLeaseRepository, LeaseState

from .backends import BackendUnderTest, open_storage
from .together import run_together

if TYPE_CHECKING:
    from gateway.storage import Storage

_DEADLINE_S = 60.0
LONG = 600.0


def repo(storage: Storage) -> AdapterLeaseRepository:
    return storage.adapter_leases


async def claim_until_held(
    leases: AdapterLeaseRepository, holder: str, lease_s: float, within_s: float = 20.0
) -> tuple[LeaseState, int]:
    """Claim until ``holder`` holds the telegram lease (bounded); the state and how many claims it took."""
    deadline = time.monotonic() + within_s
    for attempt in range(1, 10_000):
        state = await leases.claim("telegram", holder, "host-b", lease_s)
        if state.held:
            return state, attempt
        assert time.monotonic() < deadline, f"never held: {state}"
        await asyncio.sleep(0.02)  # polling the lease with a deadline
    raise AssertionError("unreachable")


async def wait_expired(leases: AdapterLeaseRepository, adapter: str, within_s: float = 20.0) -> None:
    deadline = time.monotonic() + within_s
    while any(owner.live for owner in await leases.owners() if owner.adapter == adapter):
        assert time.monotonic() < deadline, f"the {adapter} lease never expired"
        await asyncio.sleep(0.02)  # polling the lease with a deadline


async def test_one_holder_at_a_time_and_the_other_learns_who_and_for_how_long(storage: Storage) -> None:
    leases = repo(storage)
    first = await leases.claim("telegram", "a:1:x", "host-a", LONG)
    assert first.held and first.holder == "a:1:x" and first.host == "host-a"
    assert first.generation == 1 and LONG - 5 < first.expires_in_s <= LONG
    other = await leases.claim("telegram", "b:2:y", "host-b", LONG)
    assert not other.held
    assert (other.holder, other.host, other.generation) == ("a:1:x", "host-a", 1)
    assert 0 < other.expires_in_s <= LONG
    # Each adapter has its own lease.
    assert (await leases.claim("discord", "b:2:y", "host-b", LONG)).held


async def test_a_renewal_keeps_the_lease_and_its_generation_and_extends_it(storage: Storage) -> None:
    leases = repo(storage)
    await leases.claim("telegram", "a:1:x", "host-a", 5.0)
    renewed = await leases.claim("telegram", "a:1:x", "host-a", LONG)
    assert renewed.held and renewed.generation == 1
    assert renewed.expires_in_s > LONG - 5
    (owner,) = await leases.owners()
    assert (owner.adapter, owner.holder, owner.host, owner.generation) == ("telegram", "a:1:x", "host-a", 1)
    assert owner.live and owner.expires_at > owner.acquired_at


async def test_a_release_frees_the_lease_at_once_for_the_next_owner(storage: Storage) -> None:
    leases = repo(storage)
    await leases.claim("telegram", "a:1:x", "host-a", LONG)
    assert not await leases.release("telegram", "b:2:y")  # only the holder releases
    assert not (await leases.claim("telegram", "b:2:y", "host-b", LONG)).held
    assert await leases.release("telegram", "a:1:x")
    assert not await leases.release("telegram", "a:1:x")  # released already
    (released,) = await leases.owners()
    assert not released.live and released.holder == "a:1:x"
    taken = await leases.claim("telegram", "b:2:y", "host-b", LONG)
    assert taken.held and taken.holder == "b:2:y" and taken.generation == 2
    (owner,) = await leases.owners()
    assert owner.live and owner.host == "host-b" and owner.generation == 2


async def test_an_expired_lease_goes_to_the_next_claimant_and_the_old_holder_learns_it(
    storage: Storage,
) -> None:
    leases = repo(storage)
    first = await leases.claim("telegram", "a:1:x", "host-a", 0.3)
    taken, attempts = await claim_until_held(leases, "b:2:y", LONG)
    assert attempts > 1, "taken before the 0.3 s lease ended"
    assert taken.generation == first.generation + 1
    late = await leases.claim("telegram", "a:1:x", "host-a", LONG)  # the old owner's next renewal
    assert not late.held and late.holder == "b:2:y" and late.generation == 2
    # A holder that takes its own expired lease back (nobody else took it) keeps the generation.
    await leases.claim("discord", "a:1:x", "host-a", 0.05)
    await wait_expired(leases, "discord")
    again = await leases.claim("discord", "a:1:x", "host-a", LONG)
    assert again.held and again.generation == 1


async def test_leases_survive_a_reopen(backend: BackendUnderTest) -> None:
    async with backend.open() as storage:
        await repo(storage).claim("telegram", "a:1:x", "host-a", LONG)
    async with backend.open() as storage:
        assert not (await repo(storage).claim("telegram", "b:2:y", "host-b", LONG)).held


def claim_together(spec: str, holder: str, barrier: Barrier, out: Queue[list[str]]) -> None:
    """Multiprocessing target: claim 20 adapters at once with the other processes; put those held."""

    async def run() -> list[str]:
        async with open_storage(spec) as storage:
            leases = repo(storage)
            barrier.wait(timeout=_DEADLINE_S)
            states = await asyncio.gather(
                *(leases.claim(f"adapter-{n}", holder, holder, LONG) for n in range(20))
            )
            return [state.adapter for state in states if state.held]

    out.put(asyncio.run(run()))


def test_processes_claiming_together_leave_exactly_one_holder_per_adapter(
    backend: BackendUnderTest,
) -> None:
    asyncio.run(_create(backend))
    held = run_together(claim_together, [(backend.spec, f"host-{n}:{n}:p") for n in range(3)])
    everything = sorted(adapter for adapters in held for adapter in adapters)
    assert everything == sorted(f"adapter-{n}" for n in range(20))


def claim_and_die(spec: str, lease_s: float, barrier: Barrier, out: Queue[float]) -> None:
    """Multiprocessing target: take the telegram lease and exit without releasing it (a crashed owner)."""

    async def run() -> float:
        async with open_storage(spec) as storage:
            barrier.wait(timeout=_DEADLINE_S)
            state = await repo(storage).claim("telegram", "dead:1:p", "host-a", lease_s)
            assert state.held
            return state.expires_in_s

    out.put(asyncio.run(run()))


async def test_a_lease_left_by_a_dead_process_is_taken_over_once_it_expires(
    backend: BackendUnderTest,
) -> None:
    await _create(backend)
    (granted,) = await asyncio.to_thread(run_together, claim_and_die, [(backend.spec, 1.5)])
    async with backend.open() as storage:
        leases = repo(storage)
        started = time.monotonic()
        standing_by = await leases.claim("telegram", "b:2:y", "host-b", LONG)
        if standing_by.expires_in_s > 0.1:  # the dead owner's lease still runs: nobody may take it yet
            assert not standing_by.held and standing_by.holder == "dead:1:p"
        taken, _ = await claim_until_held(leases, "b:2:y", LONG)
        assert taken.generation == 2
        assert time.monotonic() - started <= granted + 5.0
        (owner,) = await leases.owners()
        assert owner.holder == "b:2:y" and owner.host == "host-b"


async def _create(backend: BackendUnderTest) -> None:
    """Open once so the schema exists before processes race on it."""
    async with backend.open():
        pass
