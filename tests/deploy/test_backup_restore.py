"""`mnemogate backup PATH` / `mnemogate restore PATH`: what an operator sees saving and restoring a home."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agent_core.storage import NewMessage, Principal
from agent_core.storage.sqlite.backup import MANIFEST
from agent_core.storage.sqlite.schema import AGENT_LADDER
from gateway.cli import backup_command
from gateway.cli.main import build_parser
from gateway.storage.sqlite import GATEWAY_LADDER, open_state_store

REPO = Path(__file__).resolve().parents[2]

_HOLDER = """
import asyncio, sys
from pathlib import Path
from agent_core.storage.sqlite import StateSettings, StateStore
from gateway.storage.sqlite import open_state_store

async def hold() -> None:
    settings = StateSettings(index_enabled=sys.argv[2] == "index")
    async with open_state_store(Path(sys.argv[1]), settings):
        print("open", flush=True)
        await asyncio.to_thread(sys.stdin.read)

asyncio.run(hold())
"""


async def _fill(home: Path, texts: list[str]) -> None:
    async with open_state_store(home) as store:
        conversation = await store.ensure_conversation("web:dm:alice", Principal(person_id="alice"))
        await store.append_messages(conversation.tip_session_id, [NewMessage("user", t) for t in texts])
    people = home / "memories" / "people" / "alice"
    people.mkdir(parents=True)
    (people / "MEMORY.md").write_text("Alice keeps bees\n§\nAlice's hives are in Lyon", encoding="utf-8")
    (people / "MEMORY.md.lock").write_text("", encoding="utf-8")
    (home / "skills" / "beekeeping").mkdir(parents=True)
    (home / "skills" / "beekeeping" / "SKILL.md").write_text("---\nname: beekeeping\n---\nsmoke", "utf-8")
    (home / "SOUL.md").write_text("You are Bee.", encoding="utf-8")
    (home / "config.yaml").write_text("memory:\n  isolation: person\n", encoding="utf-8")


async def _texts(home: Path) -> list[str]:
    async with open_state_store(home) as store:
        conversation = await store.live_conversation("web:dm:alice")
        assert conversation is not None
        return [m.content or "" for m in await store.conversation_messages(conversation.id)]


def _cli(*argv: str) -> int:
    return backup_command.main(list(argv))


@contextmanager
def _running_process(home: Path, *, index: bool) -> Iterator[subprocess.Popen[str]]:
    """Another OS process with the home's state store open, as a gateway or worker would have it."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(home), "index" if index else "noindex"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "open"
        yield process
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)


async def test_backup_then_restore_gives_back_conversations_memory_and_files(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await _fill(home, ["my hives are in Lyon", "remember: 3 hives"])
    assert _cli("--home", str(home), "backup", str(tmp_path / "backup")) == 0
    assert "2 messages" in capsys.readouterr().out
    assert not (tmp_path / "backup" / "memories" / "people" / "alice" / "MEMORY.md.lock").exists()

    fresh = tmp_path / "fresh-home"
    assert _cli("--home", str(fresh), "restore", str(tmp_path / "backup")) == 0
    assert await _texts(fresh) == ["my hives are in Lyon", "remember: 3 hives"]
    memory = fresh / "memories" / "people" / "alice" / "MEMORY.md"
    assert memory.read_text(encoding="utf-8") == "Alice keeps bees\n§\nAlice's hives are in Lyon"
    assert (fresh / "skills" / "beekeeping" / "SKILL.md").read_text("utf-8").endswith("smoke")
    assert (fresh / "SOUL.md").read_text("utf-8") == "You are Bee."
    assert (fresh / "config.yaml").is_file()


async def test_backup_refuses_a_non_empty_destination(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await _fill(home, ["hello"])
    target = tmp_path / "backup"
    target.mkdir()
    (target / "precious.txt").write_text("keep me", encoding="utf-8")
    assert _cli("--home", str(home), "backup", str(target)) == 2
    assert "not empty" in capsys.readouterr().err
    assert sorted(p.name for p in target.iterdir()) == ["precious.txt"]


@pytest.mark.parametrize("index", [True, False], ids=["gateway-with-indexer", "process-without-indexer"])
async def test_restore_refuses_a_home_that_a_running_process_has_open(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], index: bool
) -> None:
    await _fill(home, ["before"])
    assert _cli("--home", str(home), "backup", str(tmp_path / "backup")) == 0
    with _running_process(home, index=index):
        assert _cli("--home", str(home), "restore", "--force", str(tmp_path / "backup")) == 2
        assert "in use" in capsys.readouterr().err
    # Once that process has exited the same restore goes through.
    assert _cli("--home", str(home), "restore", "--force", str(tmp_path / "backup")) == 0


async def test_restore_needs_force_for_a_non_empty_home_and_then_replaces_it(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await _fill(home, ["from the backup"])
    assert _cli("--home", str(home), "backup", str(tmp_path / "backup")) == 0
    other = tmp_path / "other-home"
    await _fill(other, ["newer, unrelated"])
    (other / "state.db-wal").write_bytes(b"stale journal of the old database")

    assert _cli("--home", str(other), "restore", str(tmp_path / "backup")) == 2
    assert "--force" in capsys.readouterr().err
    assert await _texts(other) == ["newer, unrelated"]

    assert _cli("--home", str(other), "restore", "--force", str(tmp_path / "backup")) == 0
    assert await _texts(other) == ["from the backup"]


async def test_restore_verifies_the_backup_before_touching_the_home(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await _fill(home, ["original"])
    assert _cli("--home", str(home), "backup", str(tmp_path / "backup")) == 0
    copy = tmp_path / "backup" / "state.db"
    with sqlite3.connect(copy) as conn:
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    conn.close()
    raw = bytearray(copy.read_bytes())
    for page in range(1, pages):  # every page but the header: b-trees become garbage
        raw[page * page_size + 8 : page * page_size + 64] = os.urandom(56)
    copy.write_bytes(bytes(raw))

    fresh = tmp_path / "fresh-home"
    assert _cli("--home", str(fresh), "restore", str(tmp_path / "backup")) == 2
    err = capsys.readouterr().err
    assert "integrity_check" in err or "not a usable" in err
    assert not (fresh / "state.db").exists()


def test_restore_refuses_a_directory_that_is_not_a_backup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "random").mkdir()
    assert _cli("--home", str(tmp_path / "home2"), "restore", str(tmp_path / "random")) == 2
    assert "not a mnemogate backup" in capsys.readouterr().err


def test_backup_and_restore_are_mnemogate_commands() -> None:
    # Fails until gateway/cli/main.py lists backup_command in COMMAND_MODULES.
    parser = build_parser()
    assert parser.parse_args(["backup", "/tmp/b"]).command == "backup"
    assert parser.parse_args(["restore", "--force", "/tmp/b"]).force is True


@pytest.mark.parametrize(
    ("table", "owner"),
    [("schema_version", ""), ("gateway_schema_version", "gateway ")],
    ids=["agent", "gateway"],
)
async def test_restore_refuses_a_backup_from_a_newer_mnemogate_by_either_ladder(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, owner: str
) -> None:
    await _fill(home, ["from a newer program"])
    assert _cli("--home", str(home), "backup", str(tmp_path / "backup")) == 0
    with sqlite3.connect(tmp_path / "backup" / "state.db") as conn:
        (version,) = conn.execute(f"SELECT version FROM {table}").fetchone()
        conn.execute(f"UPDATE {table} SET version = ?", (version + 1,))
    conn.close()
    fresh = tmp_path / "fresh-home"
    assert _cli("--home", str(fresh), "restore", str(tmp_path / "backup")) == 2
    assert f"has {owner}schema version {version + 1}, newer than this mnemogate ({version})" in (
        capsys.readouterr().err
    )
    assert not (fresh / "state.db").exists()


def _edit_manifest(backup: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    manifest = json.loads((backup / MANIFEST).read_text(encoding="utf-8"))
    edit(manifest)
    (backup / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


async def test_the_manifest_records_the_version_of_each_ladder(home: Path, tmp_path: Path) -> None:
    await _fill(home, ["hello"])
    assert _cli("--home", str(home), "backup", str(tmp_path / "backup")) == 0
    manifest = json.loads((tmp_path / "backup" / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["schema_versions"] == {"agent": AGENT_LADDER.latest, "gateway": GATEWAY_LADDER.latest}
    assert manifest["schema_version"] == AGENT_LADDER.latest  # what older readers look at


@pytest.mark.parametrize(
    ("owner", "named"), [("agent", ""), ("gateway", "gateway ")], ids=["agent", "gateway"]
)
async def test_restore_refuses_a_backup_whose_manifest_records_a_newer_ladder(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], owner: str, named: str
) -> None:
    await _fill(home, ["hello"])
    backup = tmp_path / "backup"
    assert _cli("--home", str(home), "backup", str(backup)) == 0
    latest = {"agent": AGENT_LADDER.latest, "gateway": GATEWAY_LADDER.latest}[owner]
    _edit_manifest(backup, lambda manifest: manifest["schema_versions"].update({owner: latest + 1}))
    fresh = tmp_path / "fresh-home"
    assert _cli("--home", str(fresh), "restore", str(backup)) == 2
    assert f"has {named}schema version {latest + 1}, newer than this mnemogate ({latest})" in (
        capsys.readouterr().err
    )
    assert not (fresh / "state.db").exists()


async def test_a_backup_whose_manifest_predates_schema_versions_still_restores(
    home: Path, tmp_path: Path
) -> None:
    await _fill(home, ["from an older backup"])
    backup = tmp_path / "backup"
    assert _cli("--home", str(home), "backup", str(backup)) == 0
    _edit_manifest(backup, lambda manifest: manifest.pop("schema_versions"))
    fresh = tmp_path / "fresh-home"
    assert _cli("--home", str(fresh), "restore", str(backup)) == 0
    assert await _texts(fresh) == ["from an older backup"]
