"""A reply that reached the platform just as the database went away is recorded once it is back, never sent
twice: the delivery loop keeps trying to record the send instead of leaving the row to be claimed again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from gateway.contracts import OutboundMessage, SendReceipt
from tests import postgres_server
from tests.gateway.delivery.recording_adapter import RecordingAdapter, dm
from tests.gateway.queue.harness import backbone, open_config
from tests.storage.postgres.tcp_proxy import TcpProxy, dsn_through

AWAY_S = 1.0
CLAIM_S = 2.5
"""Longer than the outage: a send left unrecorded would be made again once the claim ran out."""


class DatabaseGoesAwayOnFirstSend(RecordingAdapter):
    """Sends like any platform; the moment the first send is made, the database restarts (``AWAY_S``)."""

    def __init__(self, proxy: TcpProxy) -> None:
        super().__init__()
        self._proxy = proxy
        self.back = asyncio.Event()

    async def send(self, message: OutboundMessage) -> SendReceipt:
        receipt = await super().send(message)
        if len(self.sent) == 1:
            await self._proxy.refuse()
            asyncio.get_running_loop().call_later(AWAY_S, lambda: asyncio.ensure_future(self._back()))
        return receipt

    async def _back(self) -> None:
        await self._proxy.accept()
        self.back.set()


async def test_a_send_made_as_the_database_went_away_is_recorded_not_repeated(
    proxy: TcpProxy, home: Path
) -> None:
    storage = {
        "backend": "postgres",
        "postgres": {
            "dsn": dsn_through(proxy, postgres_server.run_dsn()),
            "schema": postgres_server.schema_for(home),
            "connect_timeout_s": 0.5,
        },
    }
    platform = DatabaseGoesAwayOnFirstSend(proxy)
    config = open_config(storage=storage, delivery={"claim_s": CLAIM_S})
    async with backbone(home, config=config, adapter=platform) as b:
        await b.gateway.pipeline.handle(dm("hello", event="e1"))
        await b.wait_sent(1)
        await asyncio.wait_for(platform.back.wait(), 10)
        (job,) = await b.jobs()

        async def delivered() -> bool:
            rows = await b.runtime.storage.outbox.for_conversation(job.conversation_id)
            return [r.state for r in rows] == ["sent"]

        deadline = asyncio.get_running_loop().time() + 10
        while not await delivered():
            assert asyncio.get_running_loop().time() < deadline, "the send was never recorded"
            await asyncio.sleep(0.05)  # polling the outbox with a deadline
    # Unrecorded, the row would have been claimed again after CLAIM_S and sent a second time to get here.
    assert platform.texts() == ["echo: hello"]
