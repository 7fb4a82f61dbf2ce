"""``mnemogate erase --person ID`` as an operator runs it: real processes on a real home directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_process import mnemogate
from tests.gateway.cli.test_search_cli import transcript
from tests.gateway.erasure.canary import files_holding


@pytest.fixture
def history(home: Path, tmp_path: Path) -> Path:
    source = tmp_path / "history.jsonl"
    lines = [
        transcript("ana-1", "ana", "the CANARYanakeeper lives in 北京 now", "noted CANARYanakeeper"),
        transcript("bob-1", "bob", "CANARYbobtour tickets", "booked CANARYbobtour"),
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = mnemogate("import", "transcripts", str(source), "--home", str(home))
    assert result.returncode == 0, result.stderr
    return home


def test_an_unknown_person_is_refused_and_nothing_changes(history: Path) -> None:
    result = mnemogate("erase", "--person", "carol", "--yes", "--home", str(history))
    assert result.returncode == 1
    assert "no person 'carol'" in result.stderr


def test_erasing_asks_for_the_id_and_a_wrong_answer_erases_nothing(history: Path) -> None:
    refused = mnemogate("erase", "--person", "ana", "--home", str(history), stdin="bob\n")
    assert refused.returncode == 1 and "not confirmed" in refused.stderr
    assert "Type the person id (ana)" in refused.stderr
    assert files_holding(history, "CANARYanakeeper") != set()

    done = mnemogate("erase", "--person", "ana", "--home", str(history), stdin="ana\n")
    assert done.returncode == 0, done.stderr
    assert "person ana: erased 1 conversations, 2 messages" in done.stdout
    assert files_holding(history, "CANARYanakeeper") == set()
    assert files_holding(history, "CANARYbobtour") != set()
    found = mnemogate("search", "CANARYbobtour", "--person", "bob", "--json", "--home", str(history))
    assert [item["conversation_id"] for item in json.loads(found.stdout)] == ["bob-1"]


def test_yes_skips_the_question_and_json_prints_the_report(history: Path) -> None:
    result = mnemogate("erase", "--person", "bob", "--yes", "--json", "--home", str(history))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["person_id"], report["erased_by"], report["complete"]) == ("bob", "admin:cli", True)
    assert (report["conversations"], report["messages"]) == (1, 2)
    again = mnemogate("erase", "--person", "bob", "--yes", "--home", str(history))
    assert again.returncode == 1


def test_a_provider_that_cannot_be_cleared_stops_the_erase_unless_skipped(history: Path) -> None:
    unreachable = "memory:\n  provider:\n    name: mem0\n    mem0:\n      host: http://127.0.0.1:9\n"
    (history / "config.yaml").write_text(unreachable, encoding="utf-8")
    key = {"MEM0_API_KEY": "m0-test"}
    stopped = mnemogate("erase", "--person", "ana", "--yes", "--home", str(history), env=key)
    assert stopped.returncode == 3, stopped.stderr
    assert "memory provider mem0 could not erase" in stopped.stderr and "nothing was erased" in stopped.stderr
    assert files_holding(history, "CANARYanakeeper") != set()
    skipped = mnemogate(
        "erase", "--person", "ana", "--yes", "--skip-provider", "--home", str(history), env=key
    )
    assert skipped.returncode == 0, skipped.stderr
    assert "memory provider mem0 skipped" in skipped.stdout
    assert files_holding(history, "CANARYanakeeper") == set()
