"""`mnemogate migrate --to postgres DSN`: a SQLite home filled through the real gateway moves into PostgreSQL,
everything arrives, and the gateway carries on there — same conversations, tips and frozen prompts.

Needs the test PostgreSQL server (skipped with the reason without one, failed when
MNEMOGATE_TEST_POSTGRES=required); every home migrates into its own schema of the run's database.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agent_core.actor import Actor
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from agent_core.storage import CompressionCooldown, NewMessage, NewSegment, Principal
from agent_core.storage.search_index import SearchScope
from bench.store_corpus import ChatCorpus
from gateway.cli.main import main
from gateway.config import Home, Settings, StorageSettings
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.queue import WorkerPool
from gateway.runtime import Runtime, build_gateway, open_runtime
from gateway.storage import Storage, open_storage
from gateway.storage.postgres.backend import open_postgres_storage
from gateway.storage.sqlite.client_key_file import KEY_FILENAME, ClientKeyFile
from tests import postgres_server
from tests.adapters.fakes.recording_sink import wait_until

PLATFORM = "bench"
SKILL = "---\nname: beekeeping\ndescription: how to keep bees\n---\nSmoke calms the hive.\n"


def _config(storage: dict[str, Any]) -> Settings:
    return Settings.model_validate(
        {
            "access": {PLATFORM: {"mode": "open"}},
            "rate_limit": {"enabled": False},
            "queue": {"concurrency": 2, "poll_min_s": 0.005, "poll_max_s": 0.05},
            "memory": {"provider": {"name": "local"}},
            "storage": storage,
        }
    )


def _postgres(home: Path, schema: str | None = None) -> dict[str, Any]:
    return {
        "backend": "postgres",
        "postgres": {"dsn": postgres_server.run_dsn(), "schema": schema or _schema(home)},
    }


def _schema(home: Path) -> str:
    return postgres_server.schema_for(home)


def _message(chat: int, n: int) -> InboundMessage:
    return InboundMessage(
        event_id=f"{chat}:{n}",
        chat=ChatRef(PLATFORM, f"chat{chat}", ChatKind.DM),
        sender=UserRef(PLATFORM, f"user{chat}", display_name=f"User {chat}"),
        text=f"message {n} in chat {chat}",
        message_id=f"{chat}:{n}",
        sent_at=time.time(),
    )


@asynccontextmanager
async def _gateway(home: Path, storage: dict[str, Any]) -> AsyncIterator[tuple[Runtime, Any]]:
    """The runtime on ``home`` and a function that sends one message and waits until its turn finished."""
    settings = _config(storage)
    client = ScriptedClient(default=ScriptStep.reply("noted"))
    async with open_runtime(Home(home), settings, client=client) as runtime:
        gateway = build_gateway(runtime)
        finished: list[object] = []
        pool = WorkerPool(
            queue=runtime.storage.queue,
            agent=runtime.agent,
            signals=runtime.signals,
            settings=settings.queue,
            observer=finished.append,
        )

        async def say(chat: int, n: int) -> str:
            before = len(finished)
            stop = await gateway.pipeline.process(_message(chat, n))
            assert stop.conversation_id is not None, stop.reason
            await wait_until(lambda: len(finished) > before, 15.0, f"the turn of message {n} in chat {chat}")
            return stop.conversation_id

        async with pool:
            yield runtime, say


async def _fill(home: Path) -> dict[str, str]:
    """Three conversations of two turns each through the gateway, one compressed, plus memory, a skill,
    facts, a pairing request, a link code, checkpoints and a cooldown; the conversation ids by chat."""
    conversations: dict[str, str] = {}
    async with _gateway(home, {"backend": "sqlite"}) as (runtime, say):
        alice = Actor("alice", is_admin=True, platform="cli", label="cli")
        assert (await runtime.memory.add(alice, target="memory", content="Alice keeps bees in Lyon")).success
        assert (await runtime.memory.add(alice, target="user", content="Alice prefers short answers")).success
        assert (await runtime.memory.add(alice, target="global", content="The bot serves a bee club")).success
        runtime.storage.skills.write("beekeeping", lambda _: SKILL)
        for n in range(2):
            for chat in range(3):
                conversations[f"chat{chat}"] = await say(chat, n)
        storage = runtime.storage
        await storage.facts.create()
        assert await storage.facts.add("alice", "Alice has three hives", "turn")
        corpus = ChatCorpus(seed=7)  # bench's synthetic chat: English, Chinese, code blocks
        tip = (await storage.agent.resolve_tip(conversations["chat0"])).id
        await storage.agent.append_messages(
            tip, [NewMessage("user", corpus.message(f"m{n}")) for n in range(30)]
        )
        call = {"id": "call_1", "name": "memory", "arguments": {"action": "add", "content": "é ✓ 蜂"}}
        await storage.agent.append_messages(
            tip,
            [
                NewMessage(
                    "assistant", "", tool_calls=[call], reasoning="think\tfirst", api_content="exact\r\nbytes"
                ),
                NewMessage("tool", '{"ok": true}', tool_call_id="call_1", tool_name="memory"),
            ],
        )
        tip = (await storage.agent.resolve_tip(conversations["chat1"])).id
        await storage.agent.compress(
            tip,
            NewSegment(system_prompt="compressed prompt", model="scripted"),
            [NewMessage("user", "summary")],
        )
        tip = (await storage.agent.resolve_tip(conversations["chat2"])).id
        await storage.agent.put_compression_cooldown(
            conversations["chat2"],
            CompressionCooldown(
                tip, until=time.time() + 600.5, after_message_id=3, turns=2, kind="x", reason="r"
            ),
        )
        codes = iter(("PAIR1", "LINK1"))
        await storage.pairing.open_request(
            "telegram", "99", "Bob", per_window=5, window_s=60.0, new_code=lambda: next(codes)
        )
        person = await storage.identity.account_person(PLATFORM, "user0")
        assert person is not None
        await storage.identity.issue_link_code(
            person, ttl_s=600.0, per_window=5, window_s=60.0, new_code=lambda: next(codes)
        )
        assert await storage.checkpoints.advance("discord", "channel-7", 1234567890123)
    return conversations


def _cli(home: Path, *args: str, schema: str | None = None) -> int:
    return main(
        [
            "--home",
            str(home),
            "migrate",
            "--to",
            "postgres",
            postgres_server.run_dsn(),
            "--schema",
            schema or _schema(home),
            *args,
        ]
    )


async def _migrate(home: Path, *args: str, schema: str | None = None) -> int:
    return await asyncio.to_thread(_cli, home, *args, schema=schema)


async def _everything(storage: Storage, conversations: dict[str, str]) -> dict[str, object]:
    """What a port reader sees of every migrated concern (equal on both backends after a move)."""
    agent = storage.agent
    seen: dict[str, object] = {}
    for chat, conversation in conversations.items():
        seen[f"{chat} conversation"] = await agent.get_conversation(conversation)
        seen[f"{chat} segments"] = await agent.segments(conversation)
        seen[f"{chat} messages"] = await agent.conversation_messages(conversation)
        seen[f"{chat} outbox"] = await storage.outbox.for_conversation(conversation)
        seen[f"{chat} jobs"] = await storage.queue.jobs(conversation)
        seen[f"{chat} cooldown"] = await agent.compression_cooldown(conversation)
        seen[f"{chat} ledger"] = [await storage.ledger.seen(PLATFORM, f"{chat[4:]}:{n}") for n in range(2)]
    persons = await storage.admin.persons(limit=50)
    seen["persons"] = persons
    seen["accounts"] = [await storage.identity.accounts_of(p.id) for p in persons.rows]
    seen["pairing"] = await storage.pairing.list_requests()
    seen["checkpoints"] = await storage.checkpoints.load("discord")
    seen["inbound"] = await storage.admin.inbound_count()
    seen["documents"] = {key: storage.documents.read(key) for key in storage.documents.list_keys()}
    seen["skills"] = {name: storage.skills.read(name) for name in storage.skills.names()}
    seen["facts"] = await storage.facts.top("alice", "hives", 10)
    seen["audit"] = await agent.memory_audit("alice")
    return seen


@pytest.fixture
def filled(postgres_database: str, home: Path) -> dict[str, str]:
    return asyncio.run(_fill(home))


async def test_everything_arrives_and_the_gateway_continues_on_postgres(
    filled: dict[str, str], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = ClientKeyFile(home / KEY_FILENAME).read_or_create(secrets.token_bytes(32))  # as serve makes it
    assert await _migrate(home) == 0
    out = capsys.readouterr().out
    assert "messages" in out and " copied" in out and "verified before the commit" in out
    assert "web chat key (client_ids.key) copied" in out
    assert "people/alice/MEMORY.md: 1 entry" in out and "global/MEMORY.md: 1 entry" in out
    assert "skills copied: 1 (beekeeping)" in out
    assert (
        "backend: postgres" in out and "MNEMOGATE_STORAGE__POSTGRES__DSN" in out and "left untouched" in out
    )

    async with open_storage(home, StorageSettings()) as sqlite:
        before = await _everything(sqlite, filled)
        newest = max(m.id for chat in filled for m in before[f"{chat} messages"])  # type: ignore[attr-defined]
    async with open_postgres_storage(postgres_server.postgres_settings(home)) as postgres:
        after = await _everything(postgres, filled)
        # Every host on the schema hashes cookies with the home's key: browsers keep their conversations.
        assert await postgres.client_key.keep(secrets.token_bytes(32)) == key
    assert after.keys() == before.keys()
    for concern, value in before.items():
        assert after[concern] == value, concern
    # None of that equality is vacuous: every concern held something in the home.
    assert len(before["chat0 messages"]) == 36 and len(before["chat1 segments"]) == 2  # type: ignore[arg-type]
    assert before["chat2 cooldown"] is not None and before["checkpoints"] == {"channel-7": 1234567890123}
    assert len(before["pairing"]) == 1 and len(before["audit"]) == 3 and len(before["documents"]) == 3  # type: ignore[arg-type]
    assert len(before["facts"]) == 3 and before["skills"] == {"beekeeping": SKILL}  # type: ignore[arg-type]

    tips = {chat: before[f"{chat} conversation"].tip_session_id for chat in filled}  # type: ignore[attr-defined]
    async with _gateway(home, _postgres(home)) as (runtime, say):
        # The copied rows are searchable at once: the search columns filled themselves as they arrived.
        found = await runtime.search.search("summary", SearchScope.all_conversations(), summarise=False)
        assert filled["chat1"] in [result.conversation_id for result in found.conversations]
        for chat, conversation in filled.items():
            assert await say(int(chat[4:]), 2) == conversation
            tip = await runtime.storage.agent.resolve_tip(conversation)
            assert tip.id == tips[chat]
            frozen = next(s for s in before[f"{chat} segments"] if s.id == tip.id)  # type: ignore[attr-defined]
            assert tip.system_prompt == frozen.system_prompt
            messages = await runtime.storage.agent.conversation_messages(conversation)
            assert messages[: len(before[f"{chat} messages"])] == before[f"{chat} messages"]  # type: ignore[arg-type]
            assert [m.role for m in messages[-2:]] == ["user", "assistant"]
            assert min(m.id for m in messages[-2:]) > newest  # the id sequences continue after the copied ids


async def test_a_second_run_finds_everything_there_and_copies_nothing(
    filled: dict[str, str], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await _migrate(home) == 0
    capsys.readouterr()
    assert await _migrate(home) == 0
    out = capsys.readouterr().out
    assert "already migrated, nothing copied" in out
    assert "rows copied" not in out and " copied\n" not in out


async def test_a_home_in_use_is_refused(
    filled: dict[str, str], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with open_storage(home, StorageSettings()):
        assert await _migrate(home) == 2
    err = capsys.readouterr().err
    assert "in use" in err and "stop mnemogate first" in err
    assert len(err.strip().splitlines()) == 1


async def test_a_target_holding_other_data_is_refused_unless_replace(
    filled: dict[str, str], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = _schema(home) + "_other"
    settings = postgres_server.postgres_settings(home).model_copy(update={"schema_name": other})
    async with open_postgres_storage(settings) as postgres:
        await postgres.agent.ensure_conversation("web:dm:mallory", Principal(person_id="mallory"))
    assert await _migrate(home, schema=other) == 2
    err = capsys.readouterr().err
    assert "already holds other data: conversations (1 row), segments (1 row)" in err and "--replace" in err
    async with open_postgres_storage(settings) as postgres:  # refused before anything was written
        assert await postgres.agent.get_conversation(filled["chat0"]) is None
        assert await postgres.agent.live_conversation("web:dm:mallory") is not None

    assert await _migrate(home, "--replace", schema=other) == 0
    out = capsys.readouterr().out
    assert "emptied first (--replace): conversations (1 row)" in out
    async with open_postgres_storage(settings) as postgres:
        assert await postgres.agent.live_conversation("web:dm:mallory") is None
        assert await postgres.agent.get_conversation(filled["chat0"]) is not None


async def test_a_hand_edited_memory_file_arrives_as_the_entries_a_read_of_it_gives(
    postgres_database: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with open_storage(home, StorageSettings()) as sqlite:
        await sqlite.agent.ensure_conversation("web:dm:alice", Principal(person_id="alice"))
        edited = home / "memories" / "people" / "alice" / "MEMORY.md"
        edited.parent.mkdir(parents=True)
        edited.write_text("  Alice keeps bees\n§\n\nin Lyon  \n", encoding="utf-8")
        found = sqlite.documents.read("people/alice/MEMORY.md")
    assert found.problem is not None
    assert await _migrate(home) == 0
    assert "people/alice/MEMORY.md: 2 entries (stored text does not round-trip" in capsys.readouterr().out
    async with open_postgres_storage(postgres_server.postgres_settings(home)) as postgres:
        moved = postgres.documents.read("people/alice/MEMORY.md")
    assert moved.entries == found.entries == ("Alice keeps bees", "in Lyon") and moved.problem is None
    assert edited.read_text(encoding="utf-8") == "  Alice keeps bees\n§\n\nin Lyon  \n"  # left untouched
