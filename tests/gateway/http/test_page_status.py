"""The web chat page's connection status line: never "connected" while the server is gone.

The page's own script runs in Node (``page_harness.js``) against a scripted network and EventSource:
there is no browser on the test machines, and the status logic is what this checks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

_NODE = shutil.which("node")
_HARNESS = Path(__file__).with_name("page_harness.js")
_PAGE = Path(__file__).resolve().parents[3] / "gateway" / "webchat" / "page.html"
_HISTORY: dict[str, Any] = {"kind": "ok", "body": {"messages": [], "cursor": "e.0"}}
_POLL: dict[str, Any] = {"kind": "ok", "body": {"messages": [], "cursor": "e.0"}}
_DOWN: dict[str, Any] = {"kind": "down"}

pytestmark = pytest.mark.skipif(_NODE is None, reason="node is not installed")


def _statuses(tmp_path: Path, fetches: list[dict[str, Any]], events: list[str]) -> list[str]:
    """What the status line said, in order, with ``|event`` markers where each scripted event happened."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"fetches": fetches, "events": events}))
    assert _NODE is not None
    done = subprocess.run(
        [_NODE, str(_HARNESS), str(_PAGE), str(scenario)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return list(json.loads(done.stdout)["statuses"])


def _after(statuses: list[str], marker: str) -> list[str]:
    return statuses[statuses.index(marker) + 1 :]


def test_the_stream_says_connected_while_open_and_disconnected_while_it_reconnects(tmp_path: Path) -> None:
    statuses = _statuses(tmp_path, [_HISTORY], ["open", "error", "open"])
    assert statuses == ["connected", "|open", "disconnected, reconnecting…", "|error", "connected", "|open"]


def test_when_the_stream_gives_up_and_the_server_is_gone_the_page_never_says_connected(
    tmp_path: Path,
) -> None:
    statuses = _statuses(tmp_path, [_HISTORY], ["open", "give-up"])
    gone = _after(statuses, "|open")
    assert gone and not [s for s in gone if s.startswith("connected")], statuses
    assert gone[-1].startswith("disconnected")


def test_polling_says_connected_again_once_the_server_answers(tmp_path: Path) -> None:
    statuses = [
        s for s in _statuses(tmp_path, [_HISTORY, _DOWN, _POLL], ["give-up"]) if not s.startswith("|")
    ]
    assert statuses[:3] == ["connecting…", "disconnected, retrying…", "connected (polling)"]


def test_a_page_loaded_while_the_server_is_down_retries_until_it_is_back(tmp_path: Path) -> None:
    statuses = _statuses(tmp_path, [_DOWN, _HISTORY], ["open"])
    assert statuses == ["cannot reach the gateway, retrying…", "connected", "|open"]
