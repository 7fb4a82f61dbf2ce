"""``python -m tests.multiprocess.gateway_worker HOME``: what ``mnemogate worker --home HOME`` runs."""

from __future__ import annotations

import asyncio
import sys

from gateway.config import load_settings, resolve_home
from gateway.serving import run_worker

if __name__ == "__main__":
    home = resolve_home(sys.argv[1])
    asyncio.run(run_worker(home, load_settings(home.config_file)))
