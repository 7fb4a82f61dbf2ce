"""A real ``mnemogate serve`` on a damaged home: refused at start with one line, or not ready at run time
with a bounded log; and search comes back by itself after search.db is deleted under it."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.agent_core.storage.sqlite.damaged_home import damage_middle_pages, home_with_messages
from tests.e2e.gateway_process import free_port, serving, start, stop, wait_for_line

TOKEN = "e2e-admin-token-0123456789"
_DEADLINE_S = 20.0


def _refused(home: Path, *extra: str) -> tuple[int, str]:
    process = start(home, "serve", "--port", str(free_port()), *extra)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        return -1, stop(process)
    return process.returncode, out


def _error_line(out: str) -> str:
    errors = [line for line in out.splitlines() if line.startswith("mnemogate: error:")]
    assert len(errors) == 1, out
    return errors[0]


def test_a_damaged_middle_page_is_refused_at_start_with_one_line(home: Path) -> None:
    asyncio.run(home_with_messages(home))
    damage_middle_pages(home / "state.db")
    code, out = _refused(home)
    line = _error_line(out)
    assert code == 2, out
    assert str(home / "state.db") in line and "integrity check" in line and "--new-state" in line
    assert len(out) < 4000 and "Traceback" not in out


def test_an_empty_state_db_next_to_memories_is_refused_until_a_new_one_is_asked_for(home: Path) -> None:
    memory = home / "memories" / "people" / "alice" / "USER.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("Prefers tea.\n")
    (home / "state.db").write_bytes(b"")
    code, out = _refused(home)
    assert code == 2 and "empty (0 bytes)" in _error_line(out) and "memories/" in _error_line(out)
    assert (home / "state.db").stat().st_size == 0

    with serving(home, "--new-state") as base_url:
        assert httpx.get(f"{base_url}/readyz", timeout=5).status_code == 200
    (moved,) = home.glob("state.db.corrupt-*")
    assert moved.stat().st_size == 0 and memory.read_text() == "Prefers tea.\n"
    with serving(home, "--new-state") as base_url:  # a healthy database is kept, the flag is a no-op
        assert httpx.get(f"{base_url}/readyz", timeout=5).status_code == 200
    assert len(list(home.glob("state.db.corrupt-*"))) == 1


def test_a_worker_refuses_the_damaged_home_too_and_can_be_asked_for_a_new_database(home: Path) -> None:
    asyncio.run(home_with_messages(home, conversations=1, messages=3))
    (home / "state.db").write_bytes(b"")
    refused = start(home, "worker")
    out, _ = refused.communicate(timeout=30)
    assert refused.returncode == 2 and "search.db" in _error_line(out)
    worker = start(home, "worker", "--new-state")
    try:
        wait_for_line(worker, "ready (home")
    finally:
        stop(worker)
    assert len(list(home.glob("state.db.corrupt-*"))) == 1


def _poll(what: str, check: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + _DEADLINE_S
    while not check():
        assert process.poll() is None, f"serve exited:\n{stop(process)}"
        assert time.monotonic() < deadline, f"{what} within {_DEADLINE_S} s:\n{stop(process)}"
        time.sleep(0.05)  # polling a condition with a deadline, not synchronising on time


def _readyz(base_url: str) -> httpx.Response | None:
    try:
        return httpx.get(f"{base_url}/readyz", timeout=2)
    except httpx.HTTPError:
        return None


def test_damage_met_while_running_turns_readyz_not_ready_and_the_log_stays_small(home: Path) -> None:
    asyncio.run(home_with_messages(home))
    damage_middle_pages(home / "state.db")
    (home / "search.db").unlink()  # its rebuild reads every message, so the indexer meets the damage
    (home / "config.yaml").write_text("state:\n  integrity_check_s: 0\n")  # damage the check did not see
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    process = start(home, "serve", "--port", str(port))
    try:

        def not_ready() -> bool:
            answer = _readyz(base_url)
            return answer is not None and answer.status_code == 503

        _poll("/readyz did not turn not-ready", not_ready, process)
        answer = _readyz(base_url)
        assert answer is not None
        assert "malformed" in answer.json()["checks"]["state_db"]
        # The indexer keeps retrying while the process runs; over these seconds the unpaced loop logged
        # a traceback every 50-100 ms.
        _poll("/readyz stayed not-ready", lambda: not_ready() and time.monotonic() - started > 4.0, process)
    finally:
        out = stop(process)
    indexer_lines = [line for line in out.splitlines() if "search indexer" in line]
    assert 1 <= len(indexer_lines) <= 2, indexer_lines
    assert len(out) < 20_000, f"{len(out)} bytes of log"


def test_search_comes_back_after_search_db_is_deleted_while_serving(home: Path) -> None:
    conversation_ids = asyncio.run(home_with_messages(home, conversations=3, messages=50))
    (home / "config.yaml").write_text(f"http:\n  admin_token: {TOKEN}\n")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serving(home) as base_url, httpx.Client(base_url=base_url, headers=auth, timeout=10) as admin:

        def found() -> list[str]:
            answer = admin.get("/admin/search", params={"q": "note1x7"})
            return [c["conversation_id"] for c in answer.json()["conversations"]] if answer.is_success else []

        assert found() == [conversation_ids[1]]
        for suffix in ("", "-wal", "-shm"):
            (home / f"search.db{suffix}").unlink(missing_ok=True)
        statuses = set()
        deadline = time.monotonic() + _DEADLINE_S
        while found() != [conversation_ids[1]]:
            assert time.monotonic() < deadline, "search did not come back after search.db was deleted"
            statuses.add(admin.get("/readyz").status_code)
            time.sleep(0.05)  # polling a condition with a deadline, not synchronising on time
        assert admin.get("/readyz").json()["checks"]["search"] == "ok"
    assert statuses <= {200}  # a rebuilding index degrades search; it never makes the gateway unready
