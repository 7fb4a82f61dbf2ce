"""``mnemogate pair``: the operator approves or denies a waiting user from a real, separate process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gateway.access import AccessControl, AccessSettings, Admitted, Denied
from gateway.contracts import ChatKind, ChatRef, InboundMessage, UserRef
from gateway.storage.sqlite import SqliteStorage, open_state_store
from tests.cli_process import mnemogate

PAIRING_ON = "access:\n  telegram:\n    pairing: true\n"


def pair(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mnemogate pair ARGS`` in a fresh process."""
    return mnemogate("pair", *args, "--home", str(home))


def dm_from(user_id: str) -> InboundMessage:
    sender = UserRef("telegram", user_id, display_name="Grace")
    return InboundMessage(
        event_id=f"e{user_id}", chat=ChatRef("telegram", user_id, ChatKind.DM), sender=sender, text="hi"
    )


async def pending_code(home: Path, user_id: str) -> str:
    settings = AccessSettings.model_validate({"telegram": {"pairing": True}})
    async with open_state_store(home) as state:
        denied = await AccessControl(
            settings, SqliteStorage(state).identity, SqliteStorage(state).pairing
        ).admit(dm_from(user_id))
    assert isinstance(denied, Denied) and denied.notice is not None
    return denied.notice.split("pairing code is ")[1][:8]


async def admit(home: Path, user_id: str) -> Admitted | Denied:
    settings = AccessSettings.model_validate({"telegram": {"pairing": True}})
    async with open_state_store(home) as state:
        return await AccessControl(
            settings, SqliteStorage(state).identity, SqliteStorage(state).pairing
        ).admit(dm_from(user_id))


async def test_an_approved_user_is_admitted_and_a_denied_one_is_not(home: Path) -> None:
    (home / "config.yaml").write_text(PAIRING_ON, encoding="utf-8")
    grace = await pending_code(home, "42")
    mallory = await pending_code(home, "666")

    listed = pair(home, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {(r["code"], r["account_id"], r["state"]) for r in json.loads(listed.stdout)} == {
        (grace, "42", "pending"),
        (mallory, "666", "pending"),
    }

    approved = pair(home, "approve", grace.lower())
    assert approved.returncode == 0, approved.stderr
    assert f"approved: {grace}  telegram:42 (Grace)" in approved.stdout
    denied = pair(home, "deny", mallory)
    assert denied.returncode == 0, denied.stderr

    assert isinstance(await admit(home, "42"), Admitted)
    assert isinstance(await admit(home, "666"), Denied)
    assert "no pending pairing requests" in pair(home, "list").stdout
    everything = pair(home, "list", "--all").stdout
    assert "approved" in everything and "denied" in everything


def test_unknown_codes_fail_with_a_message_and_no_traceback(home: Path) -> None:
    result = pair(home, "approve", "ZZZZZZZZ")
    assert result.returncode == 1
    assert "no pairing request has code ZZZZZZZZ" in result.stderr and "Traceback" not in result.stderr
