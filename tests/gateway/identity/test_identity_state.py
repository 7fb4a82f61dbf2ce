"""state.db's identity tables: an old database gains them on upgrade, and processes agree on persons."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from agent_core.storage.sqlite import StateSettings
from agent_core.storage.sqlite.connection import connect
from agent_core.storage.sqlite.engine import StorePaths
from agent_core.storage.sqlite.schema import migrate
from agent_core.storage.sqlite.writer import WriteGate
from gateway.contracts import UserRef
from gateway.identity import Accounts, Pairing
from gateway.storage.sqlite import open_state_store


async def test_a_version_2_database_gains_identity_tables_and_keeps_its_people(home: Path) -> None:
    paths = StorePaths.for_home(home, StateSettings())
    conn = connect(paths.db, busy_timeout_ms=100)
    gate = WriteGate(conn, paths.db, paths.write_lock, StateSettings())
    try:
        assert migrate(gate, paths.db, target=2) == 2
        conn.execute("INSERT INTO persons(id, display_name, created_at) VALUES ('p_old', 'Old', 1)")
        conn.execute(
            "INSERT INTO accounts(platform, account_id, person_id, created_at) "
            "VALUES ('slack', 'U1', 'p_old', 1)"
        )
    finally:
        gate.close()
        conn.close()

    async with open_state_store(home) as store:
        accounts = Accounts(store)
        assert (await accounts.person_for(UserRef("slack", "U1"))).person_id == "p_old"
        code = await accounts.issue_link_code(await accounts.person_for(UserRef("slack", "U1")))
        assert (await accounts.redeem_link_code(code, UserRef("web", "c1"))).person_id == "p_old"
        assert (await Pairing(store).request(UserRef("telegram", "9"))).issued


def _resolve_many(home: str, out: multiprocessing.Queue[list[str]]) -> None:
    import asyncio

    async def run() -> list[str]:
        async with open_state_store(Path(home)) as store:
            accounts = Accounts(store)
            return [(await accounts.person_for(UserRef("telegram", str(n)))).person_id for n in range(30)]

    out.put(asyncio.run(run()))


def test_two_processes_seeing_the_same_new_accounts_agree_on_their_persons(home: Path) -> None:
    context = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue[list[str]] = context.Queue()
    workers = [context.Process(target=_resolve_many, args=(str(home), out)) for _ in range(2)]
    for worker in workers:
        worker.start()
    results = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    assert results[0] == results[1]
    assert len(set(results[0])) == 30
