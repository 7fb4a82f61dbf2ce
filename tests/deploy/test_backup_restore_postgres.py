"""`mnemogate backup PATH` / `restore PATH` on PostgreSQL: pg_dump of the home's schema, pg_restore into
another schema of the run's database, and the host-local files beside the dump.

Skipped with the reason when the test server does not answer (failed when MNEMOGATE_TEST_POSTGRES=required),
and when pg_dump/pg_restore are not installed.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.storage import NewMessage, Principal
from agent_core.storage.postgres.settings import PostgresSettings
from gateway.cli import backup_command
from gateway.storage.postgres.backend import open_postgres_storage
from gateway.storage.postgres.backup import DUMP_FILE, MANIFEST
from gateway.storage.postgres.probe import LADDERS

from .. import postgres_server

pytestmark = pytest.mark.skipif(
    shutil.which("pg_dump") is None or shutil.which("pg_restore") is None,
    reason="pg_dump/pg_restore are not installed (postgresql-client)",
)

KEY = b"k" * 32


def _home(root: Path, dsn: str) -> Path:
    root.mkdir()
    schema = postgres_server.schema_for(root)
    (root / "config.yaml").write_text(
        f"storage:\n  backend: postgres\n  postgres:\n    dsn: '{dsn}'\n    schema: {schema}\n", "utf-8"
    )
    return root


async def _fill(home: Path, texts: list[str]) -> None:
    async with open_postgres_storage(postgres_server.postgres_settings(home)) as storage:
        conversation = await storage.agent.ensure_conversation("web:dm:alice", Principal(person_id="alice"))
        await storage.agent.append_messages(
            conversation.tip_session_id, [NewMessage("user", t) for t in texts]
        )


async def _texts(home: Path) -> list[str]:
    async with open_postgres_storage(postgres_server.postgres_settings(home)) as storage:
        conversation = await storage.agent.live_conversation("web:dm:alice")
        assert conversation is not None
        return [m.content or "" for m in await storage.agent.conversation_messages(conversation.id)]


def _cli(*argv: str) -> int:
    return backup_command.main(list(argv))


@pytest.fixture
def source(postgres_database: str, tmp_path: Path) -> Path:
    home = _home(tmp_path / "source-home", postgres_database)
    asyncio.run(_fill(home, ["my hives are in Lyon", "remember: 3 hives"]))
    (home / "SOUL.md").write_text("You are Bee.", encoding="utf-8")
    (home / "client_ids.key").write_bytes(KEY)
    return home


def test_backup_is_a_pg_dump_with_the_sqlite_manifest_shape(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup"
    assert _cli("--home", str(source), "backup", str(backup)) == 0
    out = capsys.readouterr().out
    schema = postgres_server.schema_for(source)
    assert f"pg_dump of schema {schema}" in out and "2 messages" in out
    manifest = json.loads((backup / MANIFEST).read_text("utf-8"))
    assert manifest["format"] == 1 and manifest["backend"] == "postgres"
    assert manifest["schema"] == schema and manifest["messages"] == 2
    assert manifest["schema_versions"] == {ladder.owner: ladder.latest for ladder in LADDERS}
    assert manifest["schema_version"] == manifest["schema_versions"]["agent"]
    assert manifest["files"] == [DUMP_FILE, "SOUL.md", "client_ids.key", "config.yaml"]
    assert (backup / DUMP_FILE).stat().st_mode & 0o777 == 0o600
    assert (backup / DUMP_FILE).read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format


def test_restore_into_another_schema_gives_back_the_conversations_and_host_files(
    postgres_database: str, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli("--home", str(source), "backup", str(tmp_path / "backup")) == 0
    target = _home(tmp_path / "target-home", postgres_database)
    config = (target / "config.yaml").read_text("utf-8")
    capsys.readouterr()

    assert _cli("--home", str(target), "restore", str(tmp_path / "backup")) == 0
    out = capsys.readouterr().out
    assert f"into schema {postgres_server.schema_for(target)}" in out and "2 messages" in out
    assert asyncio.run(_texts(target)) == ["my hives are in Lyon", "remember: 3 hives"]
    assert (target / "SOUL.md").read_text("utf-8") == "You are Bee."
    assert (target / "client_ids.key").read_bytes() == KEY
    # config.yaml names where this host's state lives: the restore never rewrites it.
    assert (target / "config.yaml").read_text("utf-8") == config
    assert "not written" in out and "config.yaml" in out
    # The source schema is untouched and still serves.
    assert asyncio.run(_texts(source)) == ["my hives are in Lyon", "remember: 3 hives"]


def test_restore_needs_force_for_a_schema_with_tables_and_then_replaces_it(
    postgres_database: str, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli("--home", str(source), "backup", str(tmp_path / "backup")) == 0
    target = _home(tmp_path / "target-home", postgres_database)
    asyncio.run(_fill(target, ["newer, unrelated"]))
    (target / "SOUL.md").write_text("You are Wasp.", encoding="utf-8")

    assert _cli("--home", str(target), "restore", str(tmp_path / "backup")) == 2
    assert "--force" in capsys.readouterr().err
    assert asyncio.run(_texts(target)) == ["newer, unrelated"]

    assert _cli("--home", str(target), "restore", "--force", str(tmp_path / "backup")) == 0
    assert asyncio.run(_texts(target)) == ["my hives are in Lyon", "remember: 3 hives"]
    assert (target / "SOUL.md").read_text("utf-8") == "You are Bee."


def test_restore_refuses_while_a_mnemogate_process_is_connected(
    postgres_database: str, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli("--home", str(source), "backup", str(tmp_path / "backup")) == 0
    target = _home(tmp_path / "target-home", postgres_database)

    async def restore_while_open() -> int:
        async with open_postgres_storage(postgres_server.postgres_settings(target)):
            return await asyncio.to_thread(_cli, "--home", str(target), "restore", str(tmp_path / "backup"))

    assert asyncio.run(restore_while_open()) == 2
    assert "stop every gateway and worker first" in capsys.readouterr().err
    # Once it has closed the same restore goes through (forced: that process created the tables).
    assert _cli("--home", str(target), "restore", "--force", str(tmp_path / "backup")) == 0
    assert asyncio.run(_texts(target)) == ["my hives are in Lyon", "remember: 3 hives"]


def test_restore_refuses_a_newer_backup_and_one_of_the_other_backend_before_any_change(
    postgres_database: str, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup"
    assert _cli("--home", str(source), "backup", str(backup)) == 0
    manifest = json.loads((backup / MANIFEST).read_text("utf-8"))
    manifest["schema_versions"]["gateway"] += 1
    (backup / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    target = _home(tmp_path / "target-home", postgres_database)
    assert _cli("--home", str(target), "restore", str(backup)) == 2
    assert "newer than this mnemogate" in capsys.readouterr().err
    assert not (target / "SOUL.md").exists()

    sqlite_home = tmp_path / "sqlite-home"
    assert _cli("--home", str(sqlite_home), "restore", str(backup)) == 2
    assert "is a backup of a PostgreSQL database" in capsys.readouterr().err
    manifest.pop("backend")
    (backup / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    assert _cli("--home", str(target), "restore", str(backup)) == 2
    assert "backup of a SQLite home" in capsys.readouterr().err


def test_without_pg_dump_the_backup_says_what_to_run(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dsn = postgres_server.run_dsn().replace("postgres@", "postgres:pw-unseen@", 1)
    config = source / "config.yaml"
    config.write_text(config.read_text("utf-8").replace(postgres_server.run_dsn(), dsn), "utf-8")
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert _cli("--home", str(source), "backup", str(tmp_path / "backup")) == 2
    err = capsys.readouterr().err
    assert "pg_dump is not installed on this host" in err
    assert "pg_dump --format=custom --schema=" in err and "pw-unseen" not in err
    assert not (tmp_path / "backup").exists()


def test_a_restore_that_fails_midway_leaves_the_target_as_it_was(
    postgres_database: str, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noise = random.Random(7)
    # Incompressible enough that the messages' data, not the table of contents, is most of the dump.
    asyncio.run(_fill(source, ["".join(noise.choice("abcdefghij klmnop") for _ in range(300_000))]))
    backup = tmp_path / "backup"
    assert _cli("--home", str(source), "backup", str(backup)) == 0
    dump = backup / DUMP_FILE
    whole = bytearray(dump.read_bytes())
    data = len(whole) * 3 // 5
    whole[data : data + 64] = bytes(64)  # the table of contents reads; the compressed data does not
    dump.write_bytes(bytes(whole))
    target = _home(tmp_path / "target-home", postgres_database)
    asyncio.run(_fill(target, ["still here"]))

    assert _cli("--home", str(target), "restore", "--force", str(backup)) == 2
    err = capsys.readouterr().err
    assert "rolled back, nothing changed: pg_restore failed" in err, err
    # One transaction: the old schema was neither dropped nor half-replaced.
    assert asyncio.run(_texts(target)) == ["still here"]


@pytest.fixture
def two_databases(postgres_database: str) -> Iterator[tuple[str, str]]:
    """Two more empty databases of this run (the default schema ``public`` of each is ours alone)."""
    names = [f"{postgres_database.split('dbname=')[1].split()[0]}_{n}" for n in ("from", "into")]
    with postgres_server.server_connection() as conn:
        for name in names:
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    try:
        yield postgres_server.database_dsn(names[0]), postgres_server.database_dsn(names[1])
    finally:
        with postgres_server.server_connection() as conn:
            for name in names:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def test_the_default_schema_public_restores_into_a_new_database(
    two_databases: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def public_home(name: str, dsn: str) -> Path:
        home = tmp_path / name
        home.mkdir()
        (home / "config.yaml").write_text(
            f"storage:\n  backend: postgres\n  postgres:\n    dsn: '{dsn}'\n", "utf-8"
        )
        return home

    async def texts(dsn: str) -> list[str]:
        settings = PostgresSettings.model_validate({"dsn": dsn})
        async with open_postgres_storage(settings) as storage:
            found = await storage.agent.live_conversation("web:dm:alice")
            assert found is not None
            return [m.content or "" for m in await storage.agent.conversation_messages(found.id)]

    async def fill(dsn: str) -> None:
        settings = PostgresSettings.model_validate({"dsn": dsn})
        async with open_postgres_storage(settings) as storage:
            conversation = await storage.agent.ensure_conversation(
                "web:dm:alice", Principal(person_id="alice")
            )
            await storage.agent.append_messages(
                conversation.tip_session_id, [NewMessage("user", "in public")]
            )

    source_dsn, target_dsn = two_databases
    asyncio.run(fill(source_dsn))
    assert _cli("--home", str(public_home("from", source_dsn)), "backup", str(tmp_path / "backup")) == 0
    target = public_home("into", target_dsn)
    assert _cli("--home", str(target), "restore", str(tmp_path / "backup")) == 0, capsys.readouterr().err
    assert asyncio.run(texts(target_dsn)) == ["in public"]
    # public is never dropped: with tables in it, even --force is refused.
    assert _cli("--home", str(target), "restore", "--force", str(tmp_path / "backup")) == 2
    assert "restore into a new database or a dedicated schema" in capsys.readouterr().err
