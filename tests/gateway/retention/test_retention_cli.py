"""``mnemogate retention`` as an operator runs it: a real process on a real home, first ``--dry-run`` (which
changes nothing), then the run, whose counts match the dry run's and after which a dry run finds nothing."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from tests.cli_process import mnemogate

from .old_data import retention_environment, write_old_data


def retention(home: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return mnemogate("retention", *args, "--home", str(home), env=env)


def test_dry_run_then_run_removes_what_the_dry_run_counted(home: Path) -> None:
    asyncio.run(write_old_data(home))
    env = retention_environment(MNEMOGATE_RETENTION__CONVERSATIONS_DAYS="0")  # conversations: kept
    dry = retention(home, "--dry-run", "--json", env=env)
    assert dry.returncode == 0, dry.stderr
    preview = json.loads(dry.stdout)
    assert preview["dry_run"] is True
    assert preview["removed"]["ledger"] == 3 and preview["removed"]["tool_outputs"] == 1
    assert "conversations_deleted" not in preview["removed"]  # kept forever: not a kind of this run
    assert json.loads(retention(home, "--dry-run", "--json", env=env).stdout)["removed"] == preview["removed"]

    ran = retention(home, "--json", env=env)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["dry_run"] is False and report["skipped"] is None
    assert report["removed"] == preview["removed"]
    assert report["space"]["mode"] == "incremental"

    after = json.loads(retention(home, "--dry-run", "--json", env=env).stdout)
    assert set(after["removed"].values()) == {0}
    found = mnemogate("search", "okapicanary", "--all", "--json", "--home", str(home))
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == []  # the stubbed output is no longer found by its words


def test_text_output_names_each_kind_and_the_space(home: Path) -> None:
    asyncio.run(write_old_data(home))
    result = retention(home, env=retention_environment(MNEMOGATE_RETENTION__CONVERSATIONS_GRACE_DAYS="0"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "retention removed:"
    counts = {line.rsplit(maxsplit=1)[0].strip(): int(line.rsplit(maxsplit=1)[1]) for line in lines[1:-1]}
    assert counts["inbound ledger rows"] == 3
    assert counts["idle conversations ended"] == 1 and counts["conversations deleted"] == 1
    assert lines[-1].startswith("space: state.db ") and "free" in lines[-1]
