"""The client-key port on every backend: the first key stored is the deployment's for good, whoever asks
and from wherever (another process, another host, after a restart), and processes starting together agree."""

from __future__ import annotations

import asyncio
from multiprocessing import Barrier, Queue

from .backends import BackendUnderTest, open_storage
from .together import run_together


async def test_the_first_key_stored_is_kept_for_every_later_opener(backend: BackendUnderTest) -> None:
    async with backend.open() as storage:
        assert await storage.client_key.keep(b"a" * 32) == b"a" * 32
        assert await storage.client_key.keep(b"b" * 32) == b"a" * 32
    async with backend.open() as another_host:
        assert await another_host.client_key.keep(b"c" * 32) == b"a" * 32


def _keep(spec: str, proposed: bytes, barrier: Barrier, out: Queue[bytes]) -> None:
    async def run() -> bytes:
        async with open_storage(spec) as storage:
            barrier.wait(timeout=60)
            return await storage.client_key.keep(proposed)

    out.put(asyncio.run(run()))


def test_processes_starting_together_agree_on_one_key(backend: BackendUnderTest) -> None:
    results = run_together(_keep, [(backend.spec, bytes([n]) * 32) for n in range(1, 4)])
    assert len(set(results)) == 1 and results[0] in {bytes([n]) * 32 for n in range(1, 4)}
