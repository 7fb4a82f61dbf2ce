"""Real ``mnemogate serve`` / ``mnemogate worker`` processes on a temporary home, for end-to-end tests."""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

_START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOGATE_")}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    return env


def start(home: Path, *args: str, open_files: int | None = None) -> subprocess.Popen[str]:
    """``mnemogate ARGS --home HOME``; ``open_files`` sets the child's RLIMIT_NOFILE (soft and hard)."""

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", *args, "--home", str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
        preexec_fn=limit if open_files is not None else None,
    )


def stop(process: subprocess.Popen[str], timeout: float = 20) -> str:
    """SIGTERM, wait (SIGKILL after ``timeout``); returns what the process printed."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate(timeout=5)
    return out or ""


def wait_healthy(base_url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"serve exited early:\n{stop(process)}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200:
                return
        time.sleep(0.05)  # polling a condition with a deadline, not synchronising on time
    raise AssertionError(f"serve not ready within {_START_TIMEOUT_S} s:\n{stop(process)}")


_WORKER_FALLBACK = (
    "import asyncio, sys; from gateway.config import load_settings, resolve_home; "
    "from gateway.serving import run_worker; home = resolve_home(sys.argv[1]); "
    "asyncio.run(run_worker(home, load_settings(home.config_file)))"
)


def start_worker(home: Path) -> subprocess.Popen[str]:
    """``mnemogate worker``; until the CLI registers it, the same ``run_worker`` via ``python -c``."""
    from gateway.cli.main import COMMAND_MODULES

    if any(module.__name__.endswith("worker_command") for module in COMMAND_MODULES):
        return start(home, "worker")
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER_FALLBACK, str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
    )


@contextlib.contextmanager
def serving(home: Path, *extra: str) -> Iterator[str]:
    """``mnemogate serve`` on a free loopback port; yields its base URL."""
    port = free_port()
    process = start(home, "serve", "--port", str(port), *extra)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url, process)
        yield base_url
    finally:
        stop(process)


def wait_for_line(process: subprocess.Popen[str], needle: str, timeout: float = _START_TIMEOUT_S) -> str:
    """Read the process's output until a line contains ``needle`` (bounded by ``timeout``).

    Reads the pipe's file descriptor directly: select() on a buffered text stream misses lines that
    arrived in the same read as an earlier one and wait in Python's buffer.
    """
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = time.monotonic() + timeout
    received = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        received += chunk
        for line in received.decode("utf-8", errors="replace").splitlines():
            if needle in line:
                return line
    raise AssertionError(f"{needle!r} not printed within {timeout} s:\n{received.decode(errors='replace')}")
