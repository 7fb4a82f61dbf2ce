"""A polling adapter under its lease, on every storage backend: a standby never polls Telegram, takes over
at once when the owner stops and within the lease when the owner loses the database; an owner whose lease
ran out (it hung) refuses inbound messages and sends before it even renews, and one whose lease another
process held meanwhile restarts instead of carrying on.

The Telegram cases run the real python-telegram-bot adapter against the loopback fake Bot API.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.telegram import create_adapter
from agent_core.storage.errors import StateError
from gateway.adapter_ownership import LeasedAdapter, LeaseLostError, LeaseTerms, NotOwnerError, WhileOwned
from gateway.contracts import Adapter, ChatKind, ChatRef, OutboundMessage
from gateway.storage import Storage
from gateway.storage.adapter_leases import AdapterLeaseRepository, AdapterOwner, LeaseState
from tests.adapters.fakes.recording_sink import RecordingSink, wait_until
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.adapters.telegram.conftest import adapter_settings
from tests.gateway.delivery.recording_adapter import RecordingAdapter, dm
from tests.storage.contract.backends import BACKEND_KINDS, backend_for

ALICE = tg_user(4242, "Alice")
LEASE_S = 1.5


class CountingLeases:
    """The lease repository as one process sees it: counts its claims; ``fail`` makes the database away."""

    def __init__(self, inner: AdapterLeaseRepository) -> None:
        self.inner = inner
        self.claims = 0
        self.fail = False

    async def claim(self, adapter: str, holder: str, host: str, lease_s: float) -> LeaseState:
        self.claims += 1
        if self.fail:
            raise StateError("the database is unreachable")
        return await self.inner.claim(adapter, holder, host, lease_s)

    async def release(self, adapter: str, holder: str) -> bool:
        if self.fail:
            raise StateError("the database is unreachable")
        return await self.inner.release(adapter, holder)

    async def owners(self) -> list[AdapterOwner]:
        return await self.inner.owners()


@pytest.fixture(params=BACKEND_KINDS)
async def storage(request: pytest.FixtureRequest, home: Path) -> AsyncIterator[Storage]:
    if request.param == "postgres":
        request.getfixturevalue("postgres_database")  # skips, or fails when required, without a server
    async with backend_for(request.param, home).open() as opened:
        yield opened


def telegram(fake: FakeTelegramServer, leases: AdapterLeaseRepository, host: str) -> LeasedAdapter:
    inner = create_adapter(adapter_settings(fake))
    return LeasedAdapter(inner, leases, LeaseTerms(f"{host}:1:x", host, LEASE_S))


def recording(
    leases: AdapterLeaseRepository, host: str, while_owned: WhileOwned | None = None
) -> LeasedAdapter:
    terms = LeaseTerms(f"{host}:1:x", host, LEASE_S)
    return LeasedAdapter(RecordingAdapter("telegram"), leases, terms, while_owned=while_owned)


def outbound(text: str) -> OutboundMessage:
    return OutboundMessage(chat=ChatRef("telegram", "42", ChatKind.DM), text=text, idempotency_key=text)


def say(fake: FakeTelegramServer, text: str) -> None:
    fake.push(fake.message_update(private_chat(ALICE), ALICE, text))


async def test_a_standby_never_polls_and_takes_over_at_once_when_the_owner_stops(storage: Storage) -> None:
    async with FakeTelegramServer() as seen_by_a, FakeTelegramServer() as seen_by_b:
        standby_leases = CountingLeases(storage.adapter_leases)
        owner, standby = (
            telegram(seen_by_a, storage.adapter_leases, "host-a"),
            telegram(seen_by_b, standby_leases, "host-b"),
        )
        sink_a, sink_b = RecordingSink(), RecordingSink()
        async with owner, standby:
            await owner.start(sink_a)
            await standby.start(sink_b)
            assert owner.holds_lease() and owner.health().connected
            assert not standby.holds_lease()
            health = standby.health()
            assert health.standby and not health.connected
            assert health.detail.startswith("standby (owner host-a, lease ends in")
            await wait_until(lambda: standby_leases.claims >= 3, 10.0, "the standby to look three times")
            say(seen_by_a, "to the owner")
            assert [m.text for m in await sink_a.wait_for(1)] == ["to the owner"]
            assert seen_by_b.calls == []  # not even getMe: the standby's bot never started

            stopped_at = time.monotonic()
            await owner.stop()
            await wait_until(standby.holds_lease, LEASE_S, "the standby to take over")
            assert time.monotonic() - stopped_at < LEASE_S  # a released lease is taken at once
            calls_after_stop = len(seen_by_a.calls)
            say(seen_by_b, "to the new owner")
            assert [m.text for m in await sink_b.wait_for(1)] == ["to the new owner"]
            assert standby.ownership().describe() == "owned by this host (host-b)"
            assert len(seen_by_a.calls) == calls_after_stop  # the old owner polls no more
            (lease,) = await storage.adapter_leases.owners()
            assert (lease.host, lease.generation) == ("host-b", 2)


async def test_an_owner_that_loses_the_database_stops_at_once_and_another_takes_over_within_the_lease(
    storage: Storage,
) -> None:
    async with FakeTelegramServer() as fake:
        flaky = CountingLeases(storage.adapter_leases)
        owner, standby = telegram(fake, flaky, "host-a"), telegram(fake, storage.adapter_leases, "host-b")
        sink_a, sink_b = RecordingSink(), RecordingSink()
        async with owner, standby:
            await owner.start(sink_a)
            await standby.start(sink_b)
            say(fake, "before")
            await sink_a.wait_for(1)
            flaky.fail = True
            lost_at = time.monotonic()
            await wait_until(lambda: not owner.health().connected, 10.0, "the owner to stop")
            assert owner.losses == 1 and time.monotonic() - lost_at < LEASE_S  # its first failed renewal
            with pytest.raises(NotOwnerError):
                await owner.send(outbound("from a stale owner"))
            assert "lease unknown" in owner.ownership().describe()
            await wait_until(standby.holds_lease, LEASE_S + 2.0, "the standby to take over")
            assert time.monotonic() - lost_at <= LEASE_S + 1.0
            say(fake, "after")
            received = await sink_b.wait_for(1)
            assert "after" in [m.text for m in received]
            assert "after" not in [m.text for m in sink_a.received]
            assert sink_a.received[0].text == "before"
            flaky.fail = False  # the database is back: the old owner now stands by
            await wait_until(
                lambda: "owner host-b" in owner.health().detail, 10.0, "the old owner to stand by"
            )


async def test_an_owner_whose_lease_ran_out_refuses_inbound_and_sends_before_it_renews(
    storage: Storage,
) -> None:
    now = [1000.0]
    adapter = LeasedAdapter(
        RecordingAdapter("telegram"),
        storage.adapter_leases,
        LeaseTerms("host-a:1:x", "host-a", 60.0),
        clock=lambda: now[0],
    )
    inner = adapter.inner
    assert isinstance(inner, RecordingAdapter)
    sink = RecordingSink()
    async with adapter:
        await adapter.start(sink)
        assert inner.sink is not None
        await inner.sink(dm("while owned", event="e1", platform="telegram"))
        await adapter.send(outbound("while owned"))
        now[0] += 60.0  # the process hung for a whole lease: another host may own the adapter now
        assert not adapter.holds_lease()
        with pytest.raises(LeaseLostError):
            await inner.sink(dm("after the lease", event="e2", platform="telegram"))
        with pytest.raises(NotOwnerError) as refused:
            await adapter.send(outbound("after the lease"))
        assert refused.value.retryable  # delivery tries again later (on whichever host owns it then)
    assert [m.text for m in sink.received] == ["while owned"]
    assert [m.text for m in inner.sent] == ["while owned"]


async def test_an_owner_whose_lease_another_process_held_meanwhile_restarts(storage: Storage) -> None:
    leases = storage.adapter_leases
    started: list[str] = []

    class Companion:
        async def __aenter__(self) -> None:
            started.append("start")

        async def __aexit__(self, *exc: object) -> None:
            started.append("stop")

    def companion(adapter: Adapter) -> Companion:
        return Companion()

    adapter = recording(leases, "host-a", while_owned=companion)
    async with adapter:
        await adapter.start(RecordingSink())
        assert started == ["start"]
        # While this owner could not renew, its lease ended and another process held it and let it go.
        await leases.release("telegram", "host-a:1:x")
        assert (await leases.claim("telegram", "host-c:9:z", "host-c", 60.0)).held
        await leases.release("telegram", "host-c:9:z")
        await wait_until(lambda: adapter.takeovers == 2, 10.0, "the restart")
        assert adapter.losses == 1 and adapter.holds_lease()
        assert started == ["start", "stop", "start"]
        (lease,) = await leases.owners()
        assert (lease.holder, lease.generation) == ("host-a:1:x", 3)
    assert started[-1] == "stop"
    (released,) = await leases.owners()
    assert not released.live  # a stopped owner lets the next one take over at once
