"""Transcript import on every backend: ended, attributed, searchable conversations; importing twice adds
nothing twice; bad lines are named by number while the rest imports; secrets are redacted on the way in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from agent_core.search import SearchScope, SessionSearch
from gateway.storage.imports import IMPORTED_END_REASON, TranscriptImport

if TYPE_CHECKING:
    from gateway.storage import Storage


def importer(storage: Storage) -> TranscriptImport:
    return storage.imports


def line(conversation_id: str, person: str = "ana", *texts: str, **extra: object) -> str:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text, "created_at": 1_700_000_000 + i}
        for i, text in enumerate(texts or ("hello there", "hi, how can I help?"))
    ]
    return json.dumps(
        {"id": conversation_id, "person": person, "platform": "telegram", "messages": messages, **extra}
    )


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_an_imported_conversation_is_ended_attributed_and_searchable(
    storage: Storage, tmp_path: Path
) -> None:
    source = write_jsonl(
        tmp_path / "t.jsonl",
        [line("tg-42", "ana", "the lighthouse trip is in may", "noted: lighthouse in may", title="Trips")],
    )
    report = await importer(storage).import_path(source)
    store = storage.agent
    conversation = await store.get_conversation("tg-42")
    messages = await store.conversation_messages("tg-42")
    assert await storage.search.wait_indexed(10)
    found = await SessionSearch(storage.search).search("lighthouse", SearchScope.person("ana"))
    hidden = await SessionSearch(storage.search).search("lighthouse", SearchScope.person("bob"))
    assert (report.conversations, report.messages, report.errors) == (1, 2, ())
    assert conversation is not None
    assert (conversation.person_id, conversation.platform, conversation.title) == ("ana", "telegram", "Trips")
    assert conversation.end_reason == IMPORTED_END_REASON and conversation.ended_at == 1_700_000_001
    assert [(m.role, m.author, m.created_at) for m in messages] == [
        ("user", "ana", 1_700_000_000),
        ("assistant", None, 1_700_000_001),
    ]
    assert [c.conversation_id for c in found.conversations] == ["tg-42"]
    assert hidden.conversations == ()
    assert [p.id for p in (await storage.admin.persons()).rows] == ["ana"]
    assert len(await store.lineage("tg-42")) == 1


async def test_importing_the_same_file_twice_adds_nothing_twice(storage: Storage, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "t.jsonl", [line("a"), line("b"), line("a")])
    first = await importer(storage).import_path(source)
    second = await importer(storage).import_path(source)
    tallies = await storage.admin.message_tallies()
    assert (first.conversations, first.messages, first.skipped) == (2, 4, ("a",))
    assert (second.conversations, second.messages, second.skipped) == (0, 0, ("a", "b", "a"))
    assert sorted((t.conversation_id, t.user_messages, t.assistant_replies) for t in tallies) == [
        ("a", 1, 1),
        ("b", 1, 1),
    ]


async def test_a_malformed_line_is_reported_by_number_and_the_rest_imports(
    storage: Storage, tmp_path: Path
) -> None:
    lines = [
        line("one"),
        '{"id": "two", "person": "ana", "platform": "slack", "messages": [',
        "",
        json.dumps(
            {
                "id": "three",
                "person": "ana",
                "platform": "slack",
                "messages": [{"role": "system", "content": "x"}],
            }
        ),
        line("four"),
    ]
    source = tmp_path / "t.jsonl"
    source.write_bytes(("\n".join(lines) + "\n").encode() + b'{"id": "\xff"}\n')
    report = await importer(storage).import_path(source)
    present = [await storage.agent.get_conversation(i) for i in ("one", "two", "three", "four")]
    assert [e.line for e in report.errors] == [2, 4, 6]
    assert "JSON" in report.errors[0].reason and "role" in report.errors[1].reason
    assert "UTF-8" in report.errors[2].reason
    assert [c is not None for c in present] == [True, False, False, True]


async def test_lines_may_be_text_or_bytes(storage: Storage) -> None:
    report = await importer(storage).import_lines([line("s1"), line("b1").encode()])
    assert (report.conversations, report.messages, report.errors) == (2, 4, ())


async def test_secrets_in_imported_text_are_redacted(storage: Storage) -> None:
    secret = "sk-ant-api03-" + "a1B2" * 10
    await importer(storage).import_lines([line("s", "ana", f"my key is {secret}")])
    (message,) = await storage.agent.conversation_messages("s")
    assert message.content is not None and secret not in message.content
