"""Builds ``state_0_1.sql``: a release-0.1 home with a bit of every table, dumped with ``iterdump()``.

Not a test and not importable with today's code: it drives release 0.1 (commit 5fbded3) through its own
gateway backbone (pipeline, queue, workers, delivery, commands), identity, pairing, checkpoints and
compression APIs. Re-create the dump with::

    git worktree add /tmp/rel01 5fbded3
    mkdir /tmp/home01
    PYTHONPATH=/tmp/rel01 .venv/bin/python tests/storage/data/make_state_0_1.py /tmp/home01 \\
        tests/storage/data/state_0_1.sql
    git worktree remove /tmp/rel01
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path

# Modules of release 0.1 that no longer exist (so the import sorter files them as third-party).
from agent_core.state import Compressed, NewMessage, NewSegment, StateStore
from agent_core.state.outbox import add_outbox, mark_failed
from gateway.delivery.addresses import chat_to_text

from gateway.adapter_checkpoints import StateCheckpoints
from gateway.contracts import ChatKind, ChatRef, UserRef
from gateway.identity import Accounts, Pairing
from tests.gateway.delivery.recording_adapter import dm
from tests.gateway.queue.harness import backbone, open_config


async def _conversations(home: Path) -> None:
    """Turns answered and delivered, a thread, two commands, a /new, a memory write, identity rows."""
    async with backbone(home, config=open_config()) as b:
        turns = [
            dm("hello, I am Ada", event="e1"),
            dm("remember that I like green tea", event="e2"),
            dm("hi from Bob", user="bob", event="e3"),
            dm(
                "a thread question", user="bob", event="e4", chat_id="g1", kind=ChatKind.GROUP, thread_id="t1"
            ),
            dm("/whoami", event="e5"),
            dm("/new", user="bob", event="e6"),
            dm("bob starts over", user="bob", event="e7"),
        ]
        for sent, message in enumerate(turns, start=1):
            await b.gateway.pipeline.handle(message)
            await b.wait_sent(sent)
        state = b.runtime.state
        accounts = Accounts(state)
        ada = await accounts.person_for(UserRef("test", "ada", display_name="Ada"))
        await b.runtime.memory.add(person_id=ada.person_id, target="user", content="Ada likes green tea")
        code = await accounts.issue_link_code(ada)
        await accounts.redeem_link_code(code, UserRef("web", "c_browser1"))
        await accounts.issue_link_code(await accounts.person_for(UserRef("test", "bob")))  # left open
        pairing = Pairing(state)
        approved = await pairing.request(UserRef("telegram", "900", display_name="Tess"))
        await pairing.approve(approved.request.code, by="test:ada")
        await pairing.request(UserRef("telegram", "901", display_name="Uma"))  # still pending
        denied = await pairing.request(UserRef("telegram", "902"))
        await pairing.deny(denied.request.code)
        await StateCheckpoints(state, "discord").advance("channel:42", 1234567890123)
        await StateCheckpoints(state, "discord").advance("channel:43", 77)
    # A turn still queued when the gateway stopped: no worker ran to claim it.
    async with backbone(home, config=open_config(), workers=False) as b:
        await b.gateway.pipeline.handle(dm("a message nobody answered yet", user="bob", event="e8"))


async def _chain_and_outbox(home: Path) -> None:
    """Ada's first conversation continues in a compressed child segment; one reply waits, one failed."""
    async with StateStore(home) as state:
        live = await state.live_conversation("test:-:dm:dm%2Dada:-:-")
        assert live is not None
        tip = await state.resolve_tip(live.id)
        result = await state.compress(
            tip.id,
            NewSegment(system_prompt="You are mnemogate (compressed continuation)", model="scripted"),
            [NewMessage("user", "[summary] Ada said hello and likes green tea.")],
        )
        assert isinstance(result, Compressed)
        await state.append_messages(
            result.child.id,
            [
                NewMessage("user", "after compression", author=live.person_id),
                NewMessage("assistant", "still here"),
            ],
        )
        chat = chat_to_text(ChatRef(platform="test", chat_id="dm-ada", kind=ChatKind.DM))

        def queue_rows(conn: sqlite3.Connection) -> None:
            for key, text, kind in (
                ("legacy-pending", "a reply not yet delivered", "reply"),
                ("legacy-failed", "a notice that failed", "notice"),
            ):
                add_outbox(
                    conn,
                    conversation_id=live.id,
                    platform="test",
                    chat_ref=chat,
                    text=text,
                    idempotency_key=key,
                    kind=kind,
                    now=1_800_000_000.0,
                )
            (failed,) = conn.execute(
                "SELECT id FROM outbox WHERE idempotency_key = 'legacy-failed'"
            ).fetchone()
            mark_failed(conn, failed, "chat not found")

        await state.run_write(queue_rows)


def _dump(home: Path, out: Path) -> None:
    conn = sqlite3.connect(home / "state.db")
    try:
        out.write_text("\n".join(conn.iterdump()) + "\n", encoding="utf-8")
    finally:
        conn.close()


async def _build(home: Path) -> None:
    await _conversations(home)
    await _chain_and_outbox(home)


if __name__ == "__main__":
    target_home, target_sql = Path(sys.argv[1]), Path(sys.argv[2])
    asyncio.run(_build(target_home))
    _dump(target_home, target_sql)
