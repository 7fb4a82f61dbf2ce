"""A stand-alone gateway stand-in for crash tests: polls with the real adapter, stores event ids in a file.

Run: ``python -m tests.adapters.telegram.poller_process API_BASE_URL TOKEN LEDGER_PATH STORE_DELAY_S``.
The sink appends each event id as one line (one ``write`` each, so a kill leaves whole lines; a repeat is
harmless, like the inbound ledger's unique key) after a delay that widens the window in which a crash can
hit; SIGTERM stops the adapter cleanly.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from adapters.telegram import create_adapter
from gateway.contracts import InboundMessage


async def main(api_base_url: str, token: str, ledger_path: str, delay_s: float) -> None:
    ledger = os.open(ledger_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    async def sink(message: InboundMessage) -> None:
        await asyncio.sleep(delay_s)  # a slow durable write
        os.write(ledger, f"{message.event_id}\n".encode())

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    settings = {"token": token, "api_base_url": api_base_url, "poll_timeout_s": 1, "stop_grace_s": 2.0}
    async with create_adapter(settings) as adapter:
        await adapter.start(sink)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])))
