"""The transcript import format: a line is a complete conversation or a ``TranscriptLineError`` naming why."""

from __future__ import annotations

import pytest

from gateway.storage.transcripts import TranscriptLineError, parse_transcript_line


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
