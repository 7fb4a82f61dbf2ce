"""The exporter on a history longer than a page: every message and usage row, once, in order, on each
backend, through the storage port."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from agent_core.memory import MemoryLayout, MemorySettings
from agent_core.storage.records import ModelCall, NewMessage, Principal
from gateway.export import PersonExporter
from gateway.storage import MAX_PAGE
from tests.storage.contract.backends import BACKEND_KINDS, backend_for


@pytest.fixture(params=BACKEND_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        request.getfixturevalue("postgres_database")
    return str(request.param)


async def test_a_long_history_is_exported_whole_page_by_page(kind: str, home: Path, tmp_path: Path) -> None:
    total = 2 * MAX_PAGE + 7
    async with backend_for(kind, home).open() as storage:
        agent = storage.agent
        principal = Principal(person_id="p-long", platform="web", user_id="u", chat_id="u", chat_type="dm")
        record = await agent.ensure_conversation("web:-:dm:u:-:-", principal)
        batch = [NewMessage(role="user", content=f"message {n}", author="p-long") for n in range(total)]
        for start in range(0, total, 100):
            await agent.append_messages(record.tip_session_id, batch[start : start + 100], ModelCall(1, 1))
        out = tmp_path / "long.zip"
        exporter = PersonExporter(storage, MemoryLayout(home, MemorySettings()))
        summary = await exporter.export("p-long", out)
    assert summary.counts["messages"] == total and summary.counts["usage"] == total // 100 + 1
    with zipfile.ZipFile(out) as archive:
        (conversation,) = json.loads(archive.read("conversations.json"))
        lines = archive.read(conversation["file"]).decode("utf-8").splitlines()
    assert [json.loads(line)["content"] for line in lines] == [f"message {n}" for n in range(total)]
