"""Transcript import: ended, attributed, searchable conversations; idempotent; bad lines named by number."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agent_core.search import SearchScope, SessionSearch
from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.importer import IMPORTED_END_REASON, TranscriptImporter
from gateway.storage.transcripts import TranscriptLineError, parse_transcript_line


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


async def test_an_imported_conversation_is_ended_attributed_and_searchable(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "t.jsonl",
        [line("tg-42", "ana", "the lighthouse trip is in may", "noted: lighthouse in may", title="Trips")],
    )
    async with open_state_store(tmp_path / "home") as store:
        report = await TranscriptImporter(store).import_path(source)
        conversation = await store.get_conversation("tg-42")
        messages = await store.conversation_messages("tg-42")
        assert await store.wait_indexed(10)
        found = await SessionSearch(store).search("lighthouse", SearchScope.person("ana"))
        hidden = await SessionSearch(store).search("lighthouse", SearchScope.person("bob"))
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
    with sqlite3.connect(tmp_path / "home" / "state.db") as db:
        assert db.execute("SELECT id FROM persons").fetchall() == [("ana",)]


async def test_importing_the_same_file_twice_adds_nothing_twice(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "t.jsonl", [line("a"), line("b"), line("a")])
    async with open_state_store(tmp_path / "home") as store:
        first = await TranscriptImporter(store).import_path(source)
        second = await TranscriptImporter(store).import_path(source)
        total = await store.run_read(lambda c: c.execute("SELECT count(*) FROM messages").fetchone()[0])
    assert (first.conversations, first.messages, first.skipped) == (2, 4, ("a",))
    assert (second.conversations, second.messages, second.skipped) == (0, 0, ("a", "b", "a"))
    assert total == 4


async def test_a_malformed_line_is_reported_by_number_and_the_rest_imports(tmp_path: Path) -> None:
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
    async with open_state_store(tmp_path / "home") as store:
        report = await TranscriptImporter(store, batch_messages=1).import_path(source)
        present = [await store.get_conversation(i) for i in ("one", "two", "3", "four")]
    assert [e.line for e in report.errors] == [2, 4, 6]
    assert "JSON" in report.errors[0].reason and "role" in report.errors[1].reason
    assert "UTF-8" in report.errors[2].reason
    assert [c is not None for c in present] == [True, False, False, True]


async def test_secrets_in_imported_text_are_redacted(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "a1B2" * 10
    async with open_state_store(tmp_path) as store:
        await TranscriptImporter(store).import_lines([line("s", "ana", f"my key is {secret}")])
        (message,) = await store.conversation_messages("s")
    assert message.content is not None and secret not in message.content


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[1, 2]", "JSON object"),
        ('{"person": "a", "platform": "p", "messages": []}', "'id'"),
        ('{"id": " ", "person": "a", "platform": "p", "messages": []}', "'id'"),
        ('{"id": "x", "platform": "p", "messages": []}', "'person'"),
        ('{"id": "x", "person": "a", "platform": "p"}', "'messages'"),
        ('{"id": "x", "person": "a", "platform": "p", "messages": [{"role": "user"}]}', "content"),
        ('{"id": "x", "person": "a", "platform": "p", "messages": [3]}', "messages[0]"),
        ('{"id": "x", "person": "a", "platform": "p", "title": 5, "messages": []}', "'title'"),
        (
            '{"id": "x", "person": "a", "platform": "p", "messages": '
            '[{"role": "user", "content": "c", "created_at": "yesterday"}]}',
            "created_at",
        ),
        ("[" * 100_000, "JSON"),
    ],
)
def test_invalid_lines_name_their_problem(text: str, reason: str) -> None:
    with pytest.raises(TranscriptLineError, match=reason.replace("[", r"\[")):
        parse_transcript_line(text)


def test_timestamps_may_be_iso_dates() -> None:
    parsed = parse_transcript_line(
        '{"id": "x", "person": "a", "platform": "p", "messages": '
        '[{"role": "user", "content": "c", "created_at": "2024-05-01T12:00:00Z", "author": "zed"}]}'
    )
    assert parsed.messages[0].created_at == 1_714_564_800.0 and parsed.messages[0].author == "zed"
