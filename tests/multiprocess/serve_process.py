"""One ``mnemogate serve`` subprocess on a home, with platform credentials in its environment.

Used by the adapters' end-to-end tests: start it, wait for ``/readyz``, stop it with SIGTERM or kill -9,
and read its log when something fails; ``serving`` is the start-to-SIGTERM span of one that is not restarted.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e.gateway_process import free_port

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 40.0
# Every restart test is run for both ways a gateway goes down: a graceful stop and a crash.
EACH_STOP_SIGNAL = pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
_LEAKY = (
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET", "DISCORD_BOT_TOKEN",
)  # fmt: skip


def serve_environment(credentials: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without mnemogate settings or any real credential, plus ``credentials``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOGATE_") and k not in _LEAKY}
    env.update(credentials)
    return env


class ServeProcess:
    """One ``mnemogate serve`` process on ``home``; its output goes to a log file for failure reports."""

    def __init__(self, home: Path, credentials: Mapping[str, str], port: int | None = None) -> None:
        self.home, self.credentials = home, dict(credentials)
        self.port = port or free_port()
        self.log = home.parent / f"serve-{self.port}-{time.monotonic_ns()}.log"
        self.process: asyncio.subprocess.Process | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, *, wait_ready: bool = True) -> None:
        with self.log.open("w") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "gateway.cli", "serve", "--port", str(self.port),
                "--home", str(self.home), cwd=ROOT, env=serve_environment(self.credentials),
                stdout=out, stderr=out,
            )  # fmt: skip
        if wait_ready:
            await self.wait_readiness(200)

    async def readiness(self) -> httpx.Response | None:
        """``GET /readyz`` once; None while nothing answers."""
        async with httpx.AsyncClient(timeout=1) as client:
            try:
                return await client.get(f"{self.base_url}/readyz")
            except httpx.HTTPError:
                return None

    async def wait_readiness(self, status: int) -> httpx.Response:
        """Poll ``/readyz`` until it answers ``status`` (200 ready, 503 up but not ready); fail on exit."""
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            assert self.process is not None and self.process.returncode is None, self.output()
            answer = await self.readiness()
            if answer is not None and answer.status_code == status:
                return answer
            await asyncio.sleep(0.05)  # polling a condition with a deadline
        raise AssertionError(f"/readyz did not answer {status} within {DEADLINE_S} s:\n{self.output()}")

    async def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        assert self.process is not None
        if self.process.returncode is not None:
            return self.process.returncode
        os.kill(self.process.pid, sig)
        try:
            return await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.kill()
            raise AssertionError(f"serve did not exit after {sig.name}:\n{self.output()}") from None

    def output(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


@asynccontextmanager
async def serving(home: Path, credentials: Mapping[str, str]) -> AsyncIterator[ServeProcess]:
    """A started, ready ``ServeProcess`` on ``home``, stopped with SIGTERM however the block ends."""
    gateway = ServeProcess(home, credentials)
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop(signal.SIGTERM)


async def wait_until(
    condition: Callable[[], bool | Awaitable[bool]],
    what: str,
    describe: Callable[[], str],
    *,
    within_s: float = DEADLINE_S,
) -> None:
    """Poll ``condition`` (plain or async) until true; past ``within_s`` fail with ``what`` and ``describe()``
    (logs, calls)."""
    deadline = time.monotonic() + within_s
    while True:
        met = condition()
        if inspect.isawaitable(met):
            met = await met
        if met:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} ({within_s:g} s):\n{describe()}")
        await asyncio.sleep(0.02)
