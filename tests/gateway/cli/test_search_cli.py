"""``mnemogate search`` as an operator runs it: real processes on a real home directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_process import mnemogate


def transcript(conversation_id: str, person: str, *texts: str) -> str:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
    return json.dumps({"id": conversation_id, "person": person, "platform": "web", "messages": messages})


@pytest.fixture
def history(home: Path, tmp_path: Path) -> Path:
    source = tmp_path / "history.jsonl"
    source.write_text(
        "\n".join(
            [
                transcript("ana-1", "ana", "the lighthouse keeper lives in 北京 now", "noted"),
                transcript("ana-2", "ana", "buy lighthouse postcards", "ok"),
                transcript("bob-1", "bob", "lighthouse tour tickets for bob", "booked"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    result = mnemogate("import", "transcripts", str(source), "--home", str(home))
    assert result.returncode == 0, result.stderr
    return home


def test_json_output_has_the_exact_shape_and_only_the_persons_conversations(history: Path) -> None:
    result = mnemogate("search", "lighthouse", "--person", "ana", "--json", "--home", str(history))
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert {item["conversation_id"] for item in found} == {"ana-1", "ana-2"}
    for item in found:
        assert list(item) == ["conversation_id", "score", "snippets"]
        assert isinstance(item["score"], float)
        for snippet in item["snippets"]:
            assert list(snippet) == ["message_id", "role", "text"]
            assert isinstance(snippet["message_id"], int) and snippet["role"] in ("user", "assistant")
        # The matching turn comes first; the turns around it (its window) may follow as context.
        assert item["snippets"][0]["role"] == "user" and "lighthouse" in item["snippets"][0]["text"]
    assert [item["score"] for item in found] == sorted((item["score"] for item in found), reverse=True)


def test_another_person_and_all_scopes(history: Path) -> None:
    as_bob = mnemogate("search", "lighthouse", "keeper", "--person", "bob", "--json", "--home", str(history))
    everything = mnemogate("search", "lighthouse", "--all", "--limit", "10", "--json", "--home", str(history))
    assert [item["conversation_id"] for item in json.loads(as_bob.stdout)] == ["bob-1"]
    assert {item["conversation_id"] for item in json.loads(everything.stdout)} == {"ana-1", "ana-2", "bob-1"}


def test_text_output_finds_chinese_and_survives_operator_syntax(history: Path) -> None:
    chinese = mnemogate("search", "北京", "--person", "ana", "--home", str(history))
    operators = mnemogate("search", 'lighthouse AND (" NOT ^col:x *', "--all", "--home", str(history))
    nothing = mnemogate("search", "zeppelin", "--all", "--home", str(history))
    assert chinese.returncode == 0, chinese.stderr
    assert chinese.stdout.startswith("1. ana-1") and "北京" in chinese.stdout
    assert operators.returncode == 0 and "Traceback" not in operators.stderr
    assert "lighthouse" in operators.stdout
    assert nothing.returncode == 0 and nothing.stdout.strip() == "No matching conversations."


def test_person_and_all_cannot_be_combined(home: Path) -> None:
    result = mnemogate("search", "x", "--person", "ana", "--all", "--home", str(home))
    assert result.returncode == 2 and "not allowed with argument" in result.stderr
