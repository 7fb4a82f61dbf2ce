"""Two ``mnemogate serve`` processes on one database: Telegram polling runs in exactly one of them.

On SQLite they share one home; on PostgreSQL each has its own home (as two hosts would) on one schema.

The real Telegram adapter against the fake Bot API. The first gateway owns the adapter and the second stands
by (it is ready, says whose lease it waits for, and never calls Telegram); /readyz and /metrics of both
name the owner. Killed with -9, the owner leaves its lease to expire: the standby takes over within
``adapters.telegram.lease_s`` and answers what waited, each message once. A gracefully stopped owner
releases its lease, so the other takes over at once.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests import postgres_server
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.multiprocess.platform_config import allowlist, telegram_credentials, telegram_options, write_config
from tests.multiprocess.serve_process import ServeProcess, wait_until

LEASE_S = 3.0
WORDS = ["before", "waiting-0", "waiting-1", "after-takeover", "after-stop"]
USERS = {word: tg_user(6000 + n, f"User{n}") for n, word in enumerate(WORDS)}


def _write_config(home: Path, fake: FakeTelegramServer, storage: dict[str, object]) -> None:
    write_config(
        home,
        adapters={"telegram": telegram_options(fake, lease_s=LEASE_S)},
        access={"telegram": allowlist(*(user["id"] for user in USERS.values()))},
        storage=storage,
    )


@pytest.fixture(params=["sqlite", "postgres"])
def homes(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path, dict[str, object]]:
    """The two gateways' homes and their ``storage`` section."""
    if request.param == "sqlite":
        return tmp_path / "home", tmp_path / "home", {"backend": "sqlite"}
    request.getfixturevalue("postgres_database")  # skips, or fails when required, without a server
    first = tmp_path / "host-a"
    database = {"dsn": postgres_server.run_dsn(), "schema": postgres_server.schema_for(first)}
    return first, tmp_path / "host-b", {"backend": "postgres", "postgres": database}


def _say(fake: FakeTelegramServer, word: str) -> None:
    fake.push(fake.message_update(private_chat(USERS[word]), USERS[word], word))


def _replies_to(fake: FakeTelegramServer, word: str) -> int:
    return sum(1 for call in fake.calls_of("sendMessage") if call.params.get("chat_id") == USERS[word]["id"])


async def _recorded(gateway: ServeProcess) -> bool:
    return "mnemogate_outbox_pending 0.0" in await _metrics(gateway)


async def _checks(gateway: ServeProcess) -> dict[str, str]:
    answer = await gateway.wait_readiness(200)
    checks: dict[str, str] = answer.json()["checks"]
    return checks


async def _metrics(gateway: ServeProcess) -> str:
    async with httpx.AsyncClient(base_url=gateway.base_url, timeout=5) as client:
        return (await client.get("/metrics")).text


async def _wait_owned(gateway: ServeProcess, host: str, within_s: float) -> None:
    """Poll ``gateway``'s /readyz until it says it owns Telegram (bounded by ``within_s``)."""
    deadline = time.monotonic() + within_s
    while not (await _checks(gateway))["adapter:telegram"].endswith(f"owned by this host ({host}))"):
        assert time.monotonic() < deadline, f"no takeover within {within_s} s:\n{gateway.output()}"
        await asyncio.sleep(0.05)  # polling readiness with a deadline


async def _wait(condition: Callable[[], bool], what: str, *gateways: ServeProcess) -> None:
    await wait_until(condition, what, lambda: "\n----\n".join(g.output() for g in gateways))


async def test_a_standby_takes_telegram_over_within_the_lease_when_the_owner_is_killed(
    homes: tuple[Path, Path, dict[str, object]],
) -> None:
    first_home, second_home, storage = homes
    host = socket.gethostname()
    async with FakeTelegramServer() as fake:
        for home in {first_home, second_home}:
            _write_config(home, fake, storage)
        credentials = telegram_credentials(fake)
        owner, standby = ServeProcess(first_home, credentials), ServeProcess(second_home, credentials)
        try:
            await owner.start()
            getme_before = len(fake.calls_of("getMe"))
            await standby.start()
            assert (await _checks(owner))["adapter:telegram"].endswith(f"owned by this host ({host}))")
            waiting = (await _checks(standby))["adapter:telegram"]
            assert waiting.startswith(f"ok (standby (owner {host}, lease ends in"), waiting
            assert 'mnemogate_adapter_lease_held{adapter="telegram"} 0.0' in await _metrics(standby)
            owner_metrics = await _metrics(owner)
            assert 'mnemogate_adapter_lease_held{adapter="telegram"} 1.0' in owner_metrics
            assert f'mnemogate_adapter_owner{{adapter="telegram",host="{host}"}} 1.0' in owner_metrics
            _say(fake, "before")
            await _wait(lambda: _replies_to(fake, "before") == 1, "the owner's reply", owner, standby)
            # Recorded before the kill: a reply killed between its send and its record would be sent again.
            await wait_until(lambda: _recorded(owner), "the reply recorded", owner.output)
            assert len(fake.calls_of("getMe")) == getme_before  # the standby never started its bot

            await owner.stop(signal.SIGKILL)
            killed_at = time.monotonic()
            _say(fake, "waiting-0")
            _say(fake, "waiting-1")

            await _wait_owned(standby, host, within_s=LEASE_S + 5)
            took_over_s = time.monotonic() - killed_at
            assert took_over_s <= LEASE_S + 2.0, f"took {took_over_s:.1f} s"
            words = ["waiting-0", "waiting-1"]
            await _wait(lambda: all(_replies_to(fake, w) >= 1 for w in words), "the replies", standby)
            _say(fake, "after-takeover")
            await _wait(lambda: _replies_to(fake, "after-takeover") == 1, "the last reply", standby)
            assert {w: _replies_to(fake, w) for w in ["before", *words]} == dict.fromkeys(
                ["before", *words], 1
            )

            # The owner comes back and stands by; a graceful stop of the new owner hands over at once.
            owner = ServeProcess(first_home, credentials)
            await owner.start()
            assert "standby" in (await _checks(owner))["adapter:telegram"]
            await standby.stop(signal.SIGTERM)
            stopped_at = time.monotonic()
            _say(fake, "after-stop")
            await _wait(lambda: _replies_to(fake, "after-stop") == 1, "the reply after the hand-over", owner)
            assert time.monotonic() - stopped_at < LEASE_S + 10.0
        finally:
            await owner.stop(signal.SIGTERM)
            await standby.stop(signal.SIGTERM)
