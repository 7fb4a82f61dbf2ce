"""``mnemogate export --person ID OUT`` as an operator runs it (a real process) on each backend: one zip with
the person, both platforms' conversations with every message, their words in someone else's thread, memory
files, audit, usage, schedules and link history — and nothing of another person's; clear refusals."""

from __future__ import annotations

import asyncio
import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from agent_core.actor import Actor
from agent_core.storage.records import ModelCall, NewMessage, Principal
from gateway.config import Home, load_settings
from gateway.export import FORMAT_NAME, FORMAT_VERSION
from gateway.storage import Storage, open_storage
from tests.cli_process import mnemogate
from tests.gateway.cli.test_memory_transfer import configure
from tests.storage.contract.test_schedules import live_conversation, schedule

CALL = {"id": "call_1", "name": "memory", "arguments": {"action": "add", "content": "ADA-MEMORY keeps bees"}}


def in_home(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return mnemogate(*args, "--home", str(home))


async def seed_two_people(storage: Storage) -> tuple[str, str, str]:
    """Ada on two platforms (with memory, audit, usage, a schedule, a linked account) and Bob, whose
    thread Ada wrote in; every text of Bob's holds ``BOB-SECRET``. Returns (ada, bob, the thread's id)."""
    agent = storage.agent
    ada_dm, bob_dm = await live_conversation(storage, "ada"), await live_conversation(storage, "bob")
    ada, bob = ada_dm.person_id, bob_dm.person_id
    web = await agent.ensure_conversation(
        "web:-:dm:w-ada:-:-",
        Principal(person_id=ada, platform="web", user_id="w-ada", chat_id="w-ada", chat_type="dm"),
    )
    await agent.append_messages(
        web.tip_session_id,
        [
            NewMessage(role="user", content="ADA-WEB remember my bees", author=ada),
            NewMessage(role="assistant", content=None, tool_calls=[CALL]),
            NewMessage(role="tool", content='{"success": true}', tool_call_id="call_1", tool_name="memory"),
            NewMessage(role="assistant", content="ADA-WEB noted"),
        ],
        ModelCall(100, 20, 80, 0, 0.01),
    )
    bob_tip = await agent.resolve_tip(bob_dm.conversation_id)
    await agent.append_messages(
        bob_tip.id, [NewMessage(role="user", content="BOB-SECRET plans", author=bob)], ModelCall(999, 9)
    )
    thread = await agent.ensure_conversation(
        "test:-:thread:room:t1:-",
        Principal(person_id=bob, platform="test", chat_id="room", chat_type="thread"),
    )
    await agent.append_messages(
        thread.tip_session_id,
        [
            NewMessage(role="user", content="BOB-SECRET thread opener", author=bob),
            NewMessage(role="user", content="ADA-THREAD count me in", author=ada),
            NewMessage(role="assistant", content="BOB-SECRET answer to both"),
        ],
    )
    for person, store, text in (
        (ada, "MEMORY", "ADA-MEMORY keeps bees"),
        (ada, "USER", "ADA-USER prefers tea"),
        (bob, "MEMORY", "BOB-SECRET memory"),
    ):
        key = f"people/{person}/{store}.md"
        await asyncio.to_thread(storage.documents.update, key, lambda _old, t=text: ((t,), None))
        actor = Actor(
            person, conversation_id=web.id if person == ada else bob_dm.conversation_id, label="agent"
        )
        await agent.record_memory_audit(
            actor=actor, store=store.lower(), action="add", old_text=None, new_text=text
        )
    assert await storage.schedules.create(
        schedule(ada_dm, text="ADA-REMINDER water the bees"), max_per_person=9
    )
    assert await storage.schedules.create(schedule(bob_dm, text="BOB-SECRET reminder"), max_per_person=9)
    await storage.schedules.set_timezone(ada, "Europe/London")
    issued = await storage.identity.issue_link_code(
        ada, ttl_s=600, per_window=5, window_s=600, new_code=lambda: "LINKCODE77"
    )
    assert issued.code == "LINKCODE77"
    await storage.identity.redeem_link_code("LINKCODE77", "web", "w-ada")
    return ada, bob, thread.id


def seeded(home: Path) -> tuple[str, str, str]:
    async def run() -> tuple[str, str, str]:
        settings = load_settings(Home(home).config_file)
        async with open_storage(home, settings.storage) as storage:
            return await seed_two_people(storage)

    return asyncio.run(run())


def lines(archive: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in archive.read(name).decode("utf-8").splitlines()]


def check_archive(path: Path, ada: str, bob: str, thread: str) -> None:
    """Everything of Ada's is in the archive at ``path``, and nothing of Bob's."""
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        assert (manifest["format"], manifest["version"], manifest["person_id"]) == (
            FORMAT_NAME,
            FORMAT_VERSION,
            ada,
        )
        assert sorted(manifest["files"]) == sorted(archive.namelist())
        assert "format" in archive.read("README.md").decode("utf-8")
        person = json.loads(archive.read("person.json"))
        assert person["timezone"] == "Europe/London"
        assert {(a["platform"], a["account_id"]) for a in person["accounts"]} == {
            ("test", "ada"),
            ("web", "w-ada"),
        }
        links = json.loads(archive.read("links.json"))
        assert [code["used_by"] for code in links["link_codes"]] == ["web:w-ada"]

        conversations = json.loads(archive.read("conversations.json"))
        assert {c["platform"] for c in conversations} == {"test", "web"}
        texts: list[str | None] = []
        for conversation in conversations:
            record = json.loads(
                archive.read(conversation["file"].replace("messages.jsonl", "conversation.json"))
            )
            assert record["conversation"]["person_id"] == ada and record["segments"]
            messages = lines(archive, conversation["file"])
            assert len(messages) == conversation["messages"] == conversation["message_count"]
            texts += [m["content"] for m in messages]
            if conversation["platform"] == "web":
                (called,) = [m for m in messages if m["tool_calls"]]
                assert called["tool_calls"] == [CALL]
                assert any(m["role"] == "tool" and m["tool_call_id"] == "call_1" for m in messages)
        assert {"hello", "hi!", "ADA-WEB remember my bees", "ADA-WEB noted"} <= set(texts)
        joined = lines(archive, f"joined/{thread}/messages.jsonl")
        assert [m["content"] for m in joined] == ["ADA-THREAD count me in"]

        assert archive.read("memory/MEMORY.md").decode("utf-8") == "ADA-MEMORY keeps bees"
        assert archive.read("memory/USER.md").decode("utf-8") == "ADA-USER prefers tea"
        audit = lines(archive, "memory_audit.jsonl")
        assert {a["new_text"] for a in audit} == {"ADA-MEMORY keeps bees", "ADA-USER prefers tea"}
        usage = lines(archive, "usage.jsonl")
        assert [(u["input_tokens"], u["cache_read_tokens"], u["cost_usd"]) for u in usage] == [
            (100, 80, 0.01)
        ]
        assert [(u["kind"], u["platform"]) for u in usage] == [("turn", "web")]
        (reminder,) = lines(archive, "schedules.jsonl")
        assert reminder["text"] == "ADA-REMINDER water the bees" and reminder["run_history"] == []
        assert manifest["counts"]["conversations"] == 2 and manifest["counts"]["joined_messages"] == 1

        everything = b"".join(archive.read(name) for name in archive.namelist()).decode("utf-8")
        assert "BOB-SECRET" not in everything and bob not in everything and "LINKCODE77" not in everything
        assert '"content":"hi!"' in everything.replace(" ", "")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_export_holds_everything_of_the_person_and_nothing_of_another(
    backend: str, home: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    configure(home, backend, request)
    ada, bob, thread = seeded(home)
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "ada.zip"
    result = in_home(home, "export", "--person", ada, str(out), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["path"] == str(out) and summary["bytes"] == out.stat().st_size
    assert oct(out.stat().st_mode & 0o777) == oct(0o600)
    check_archive(out, ada, bob, thread)
    assert [p.name for p in out.parent.iterdir()] == [out.name], "no partial file is left beside it"


def test_refusals_are_one_line_and_leave_nothing_behind(home: Path, tmp_path: Path) -> None:
    ada, _bob, _thread = seeded(home)
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    unknown = in_home(home, "export", "--person", "p-nobody", str(tmp_path / "x.zip"))
    assert unknown.returncode == 2 and "no person 'p-nobody'" in unknown.stderr
    assert not (tmp_path / "x.zip").exists()

    taken = tmp_path / "taken.zip"
    taken.write_text("keep me", encoding="utf-8")
    refused = in_home(home, "export", "--person", ada, str(taken))
    assert refused.returncode == 2 and "exists" in refused.stderr and "--force" in refused.stderr
    assert taken.read_text(encoding="utf-8") == "keep me"
    replaced = in_home(home, "export", "--person", ada, str(taken), "--force")
    assert replaced.returncode == 0, replaced.stderr
    assert zipfile.is_zipfile(taken) and "exported person" in replaced.stdout

    for unwritable, why in (
        (tmp_path / "no-such-dir" / "a.zip", "does not exist"),
        (tmp_path, "is a directory"),
        (Path("/proc/mnemogate-export.zip"), "cannot write"),
    ):
        failed = in_home(home, "export", "--person", ada, str(unwritable))
        assert failed.returncode == 2 and why in failed.stderr, failed.stderr
        assert "Traceback" not in failed.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.zip"]
