"""Worker entry points run in real OS processes by the multi-process state tests.

``python -m tests.multiprocess.state_writer append HOME WRITER COUNT`` appends COUNT messages (one or a
few per transaction) and prints ``ack <id> <seq>`` after each awaited append, so a parent that kills the
process knows exactly which writes were acknowledged. The other functions are multiprocessing targets.
"""

from __future__ import annotations

import asyncio
import random
import sys
from multiprocessing.synchronize import Barrier
from pathlib import Path

from agent_core.storage import AlreadyCompressed, Compressed, NewMessage, NewSegment, Principal
from agent_core.storage.sqlite import StateSettings
from gateway.storage.sqlite import open_state_store
from tests.spawned import DEADLINE_S as BARRIER_TIMEOUT_S


def unique_token(writer: int, seq: int) -> str:
    """A token that occurs in exactly one message, searchable by both indexes."""
    return f"tok{writer}q{seq}z"


_CJK_DIGITS = "零一二三四五六七八九"


def unique_cjk_token(writer: int, seq: int) -> str:
    """A Chinese token that occurs in exactly one message (the trigram index covers non-ASCII text)."""

    def digits(n: int) -> str:
        return "".join(_CJK_DIGITS[int(d)] for d in str(n))

    return f"甲{digits(writer)}乙{digits(seq)}丙"


def message_text(writer: int, seq: int) -> str:
    token, cjk = unique_token(writer, seq), unique_cjk_token(writer, seq)
    return f"writer {writer} message {seq} {token} {cjk} 数据库索引第{seq}条 running tests"


async def _append_and_ack(home: Path, writer: int, count: int) -> None:
    rng = random.Random(writer)
    async with open_state_store(home) as store:
        conversation = await store.ensure_conversation(f"crash:{writer}", Principal(person_id=f"p{writer}"))
        seq = 0
        while seq < count:
            size = rng.choice((1, 1, 1, 3))
            batch = [NewMessage("user", message_text(writer, seq + i)) for i in range(size)]
            ids = await store.append_messages(conversation.tip_session_id, batch)
            for offset, message_id in enumerate(ids):
                sys.stdout.write(f"ack {message_id} {seq + offset}\n")
            sys.stdout.flush()
            seq += size


def append_in_process(home: str, writer: int, count: int, session_key: str, barrier: Barrier) -> None:
    """multiprocessing target: append ``count`` messages to the live conversation of ``session_key``."""
    asyncio.run(_append_many(Path(home), writer, count, session_key, barrier))


async def _append_many(home: Path, writer: int, count: int, session_key: str, barrier: Barrier) -> None:
    async with open_state_store(home) as store:
        conversation = await store.ensure_conversation(session_key, Principal(person_id="shared"))
        await asyncio.to_thread(barrier.wait, BARRIER_TIMEOUT_S)
        for seq in range(count):
            await store.append_message(
                conversation.tip_session_id, NewMessage("user", message_text(writer, seq))
            )


def compress_in_process(home: str, parent_session_id: str, label: str, barrier: Barrier, out: str) -> None:
    """multiprocessing target: try the compression switch of ``parent_session_id``; write the outcome."""
    result = asyncio.run(_compress(Path(home), parent_session_id, label, barrier))
    Path(out).write_text(result)


async def _compress(home: Path, parent_session_id: str, label: str, barrier: Barrier) -> str:
    async with open_state_store(home) as store:
        await asyncio.to_thread(barrier.wait, BARRIER_TIMEOUT_S)
        result = await store.compress(
            parent_session_id,
            NewSegment(system_prompt=f"prompt {label}"),
            [NewMessage("user", f"summary {label}")],
        )
    if isinstance(result, Compressed):
        return f"compressed {result.child.id}"
    assert isinstance(result, AlreadyCompressed)
    return f"already {result.tip_session_id}"


def open_in_process(home: str, barrier: Barrier) -> None:
    """multiprocessing target: open the store at the same moment as the other processes, then close it."""
    asyncio.run(_open(Path(home), barrier))


async def _open(home: Path, barrier: Barrier) -> None:
    await asyncio.to_thread(barrier.wait, BARRIER_TIMEOUT_S)
    async with open_state_store(home, StateSettings(index_enabled=False)):
        pass


if __name__ == "__main__":
    mode, home_arg, writer_arg, count_arg = sys.argv[1:5]
    if mode != "append":
        raise SystemExit(f"unknown mode {mode}")
    asyncio.run(_append_and_ack(Path(home_arg), int(writer_arg), int(count_arg)))
