"""``mnemogate usage`` as an operator runs it: real processes on a real home with recorded model calls."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_core.storage import ModelCall, Principal
from gateway.config import StorageSettings
from gateway.storage import open_storage
from tests.cli_process import mnemogate

ANA = Principal(person_id="ana", platform="telegram", user_id="1", chat_id="1", chat_type="dm")
BOB = Principal(person_id="bob", platform="slack", user_id="2", chat_id="2", chat_type="dm")


async def _record(home: Path) -> None:
    async with open_storage(home, StorageSettings()) as storage:
        ana = (await storage.agent.ensure_conversation("k-ana", ANA)).tip_session_id
        bob = (await storage.agent.ensure_conversation("k-bob", BOB)).tip_session_id
        await storage.agent.add_usage(ana, ModelCall(1_000, 100, cost_usd=1.5, model="claude-sonnet-4-5"))
        await storage.agent.add_usage(ana, ModelCall(500, 50, cost_usd=0.25, model="gpt-4o", kind="flush"))
        await storage.agent.add_usage(bob, ModelCall(200, 20, model="my-llama"))


@pytest.fixture
def recorded(home: Path) -> Path:
    asyncio.run(_record(home))
    return home


def test_the_table_lists_spenders_by_cost_and_says_what_is_unpriced(recorded: Path) -> None:
    result = mnemogate("usage", "--home", str(recorded))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["PERSON", "CALLS", "INPUT", "OUTPUT", "CACHE", "R", "CACHE", "W", "COST"]
    assert lines[1].split()[:3] == ["ana", "2", "1,500"] and lines[1].endswith("$1.7500")
    assert lines[2].split()[:2] == ["bob", "1"] and lines[2].endswith("$0.0000 + 1 unpriced")
    assert lines[3].startswith("TOTAL") and lines[3].endswith("$1.7500 + 1 unpriced")


def test_json_by_model_for_one_person(recorded: Path) -> None:
    result = mnemogate("usage", "--by", "model", "--person", "ana", "--json", "--home", str(recorded))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["by"] == "model" and report["person_id"] == "ana" and report["timezone"] == "UTC"
    assert [(g["key"], g["calls"], g["cost_usd"]) for g in report["groups"]] == [
        ("claude-sonnet-4-5", 1, 1.5),
        ("gpt-4o", 1, 0.25),
    ]
    assert report["total"]["tokens"] == 1_650 and report["total"]["cost_complete"] is True


def test_by_day_in_the_configured_zone_and_a_range_that_holds_nothing(recorded: Path) -> None:
    (recorded / "config.yaml").write_text("usage:\n  timezone: Pacific/Kiritimati\n", encoding="utf-8")
    result = mnemogate("usage", "--by", "day", "--since", "7d", "--json", "--home", str(recorded))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["timezone"] == "Pacific/Kiritimati" and report["since_iso"].endswith("+14:00")
    assert len(report["groups"]) == 1 and report["groups"][0]["calls"] == 3
    empty = mnemogate(
        "usage", "--since", "2020-01-01", "--until", "2020-02-01", "--json", "--home", str(recorded)
    )
    assert empty.returncode == 0, empty.stderr
    assert json.loads(empty.stdout)["total"]["calls"] == 0


def test_a_time_that_names_nothing_is_one_clear_error(recorded: Path) -> None:
    result = mnemogate("usage", "--since", "last tuesday", "--home", str(recorded))
    assert result.returncode == 2
    assert "cannot read the time 'last tuesday'" in result.stderr and "Traceback" not in result.stderr


def test_check_config_warns_when_a_configured_model_has_no_price(home: Path) -> None:
    config = (
        "model:\n  provider: openai\n  model: llama3-70b\n  base_url: http://127.0.0.1:11434/v1\n"
        "  auxiliary:\n    provider: openai\n    model: gpt-4o-mini-2024-07-18\n"
    )
    (home / "config.yaml").write_text(config, encoding="utf-8")
    unpriced = mnemogate("check-config", "--home", str(home))
    assert unpriced.returncode == 0, unpriced.stderr
    warnings = [line for line in unpriced.stdout.splitlines() if "has no price" in line]
    assert warnings == [
        "warning: model.model 'llama3-70b' has no price (built-in prices taken 2025-11): its calls are "
        "recorded with cost null; add usage.prices.llama3-70b with input/output/cache_read/cache_write in "
        "USD per million tokens"
    ]
    priced = config + "usage:\n  prices:\n    llama3-70b: {input: 0, output: 0}\n"
    (home / "config.yaml").write_text(priced, encoding="utf-8")
    result = mnemogate("check-config", "--home", str(home))
    assert result.returncode == 0, result.stderr
    assert "has no price" not in result.stdout
