"""``mnemogate import transcripts`` as an operator runs it: counts, idempotence, bad lines by number."""

from __future__ import annotations

import json
from pathlib import Path

from .test_search_cli import mnemogate, transcript


def test_importing_twice_adds_nothing_twice(home: Path, tmp_path: Path) -> None:
    source = tmp_path / "t.jsonl"
    source.write_text(transcript("a", "ana", "hi", "hello") + "\n" + transcript("b", "bob", "yo") + "\n")
    first = mnemogate("import", "transcripts", str(source), "--home", str(home))
    second = mnemogate("import", "transcripts", str(source), "--home", str(home))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported 2 conversation(s) with 3 message(s); 0 already present")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("imported 0 conversation(s) with 0 message(s); 2 already present")


def test_a_malformed_line_is_named_and_the_rest_is_imported_and_searchable(
    home: Path, tmp_path: Path
) -> None:
    source = tmp_path / "t.jsonl"
    lines = [
        transcript("good-1", "ana", "orchid watering plan"),
        "{not json",
        transcript("good-2", "ana", "x"),
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = mnemogate("import", "transcripts", str(source), "--home", str(home))
    assert result.returncode == 1
    assert f"{source}:2: not valid JSON" in result.stderr
    assert "imported 2 conversation(s)" in result.stdout and "1 line(s) failed" in result.stdout
    found = mnemogate("search", "orchid", "--person", "ana", "--json", "--home", str(home))
    assert [item["conversation_id"] for item in json.loads(found.stdout)] == ["good-1"]


def test_a_missing_file_is_one_clear_error(home: Path, tmp_path: Path) -> None:
    result = mnemogate("import", "transcripts", str(tmp_path / "nope.jsonl"), "--home", str(home))
    assert result.returncode == 2
    assert "cannot read" in result.stderr and "Traceback" not in result.stderr
