"""A stand-alone gateway stand-in for crash tests: polls with the real adapter, stores event ids in sqlite.

Run: ``python -m tests.adapters.telegram.poller_process API_BASE_URL TOKEN DB_PATH STORE_DELAY_S``.
The sink stores each event id (INSERT OR IGNORE, like the inbound ledger) after a delay that widens the
window in which a crash can hit; SIGTERM stops the adapter cleanly.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys

from adapters.telegram import create_adapter
from gateway.contracts import InboundMessage


async def main(api_base_url: str, token: str, db_path: str, delay_s: float) -> None:
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS ledger (event_id TEXT PRIMARY KEY)")
    db.execute("CREATE TABLE IF NOT EXISTS offers (event_id TEXT)")

    async def sink(message: InboundMessage) -> None:
        db.execute("INSERT INTO offers VALUES (?)", (message.event_id,))
        await asyncio.sleep(delay_s)  # a slow durable write
        db.execute("INSERT OR IGNORE INTO ledger VALUES (?)", (message.event_id,))

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    settings = {"token": token, "api_base_url": api_base_url, "poll_timeout_s": 1, "stop_grace_s": 2.0}
    async with create_adapter(settings) as adapter:
        await adapter.start(sink)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])))
