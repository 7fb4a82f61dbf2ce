"""The same schedules through every door: the tool, the chat commands, the admin API and the CLI give the
same answer for the same bad input, and the API and CLI add, show, cancel and re-send like the tool does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from agent_core.actor import Actor
from agent_core.tools import ToolContext
from gateway.cli.main import main
from gateway.config import HttpSettings
from gateway.http import Readiness, create_app
from gateway.http.admin import AdminBackend
from gateway.schedules import schedule_tool

from .harness import World, world

TOKEN = "admin-token-for-schedules"
BAD_ZONE = (
    "Unknown time zone 'Mars/Olympus': use an IANA name such as Europe/Berlin, America/New_York or UTC."
)
BAD_TIME = "Can't read the time '25:00': use 00:00 to 23:59."


async def ada(w: World) -> Actor:
    person = await w.runtime.storage.identity.account_person("test", "ada")
    (job, *_) = await w.runtime.storage.queue.jobs()
    assert person is not None
    return Actor(person, conversation_id=job.conversation_id, platform="test", account_id="ada")


def admin_api(w: World) -> httpx.AsyncClient:
    runtime = w.runtime
    admin = AdminBackend(
        runtime.storage.admin,
        runtime.storage.agent,
        runtime.memory,
        runtime.search,
        schedules=runtime.schedules,
    )
    app = create_app(Readiness({}), http=HttpSettings(admin_token=SecretStr(TOKEN)), admin=admin)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers)


async def cli(home: Path, *args: str) -> int:
    """``mnemogate schedule ARGS`` in a thread (the command runs its own event loop)."""
    return await asyncio.to_thread(main, ["schedule", *args, "--home", str(home)])


def deliverable_test_platform(home: Path) -> None:
    """What the CLI reads: this home's ``test`` platform is enabled (as the harness's settings say)."""
    home.joinpath("config.yaml").write_text("adapters:\n  test:\n    enabled: true\n", encoding="utf-8")


async def test_bad_input_gets_the_same_answer_from_the_tool_the_command_the_api_and_the_cli(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with world(home) as w:
        await w.say("hello", event="e1")
        await w.idle()
        book, actor = w.runtime.schedules, await ada(w)
        assert book is not None
        tool = schedule_tool(book)
        for arguments, expected in (
            ({"at": "09:00", "timezone": "Mars/Olympus"}, BAD_ZONE),
            ({"at": "25:00"}, BAD_TIME),
        ):
            result = await tool.handler({"action": "create", "message": "x", **arguments}, ToolContext(actor))
            assert result.is_error and json.loads(result.content)["error"] == expected
        assert await w.command("/timezone Mars/Olympus", event="e2") == BAD_ZONE
        await w.say("remind me at 25:00 to stretch", event="e3")  # the offline model through the tool
        await w.idle()
        assert w.texts()[-1] == f"[offline model] The schedule tool reported an error: {BAD_TIME[:-1]}."
        async with admin_api(w) as api:
            for body, expected, field in (
                ({"at": "09:00", "timezone": "Mars/Olympus"}, BAD_ZONE, "timezone"),
                ({"at": "25:00"}, BAD_TIME, "at"),
            ):
                refused = await api.post(
                    "/admin/schedules",
                    json={"conversation_id": actor.conversation_id, "message": "x", **body},
                )
                assert refused.status_code == 400
                assert (refused.json()["detail"], refused.json()["field"]) == (expected, field)
            zone = await api.put("/admin/persons/p1/timezone", json={"timezone": "Mars/Olympus"})
            assert zone.status_code == 400 and zone.json()["detail"] == BAD_ZONE
    deliverable_test_platform(home)
    capsys.readouterr()
    conversation = actor.conversation()
    for flags, expected in (
        (("--at", "09:00", "--timezone", "Mars/Olympus"), BAD_ZONE),
        (("--at", "25:00"), BAD_TIME),
    ):
        assert await cli(home, "add", "--conversation", conversation, "--message", "x", *flags) == 2
        assert capsys.readouterr().err.strip() == f"mnemogate: error: {expected}"


async def test_the_admin_api_adds_lists_shows_and_cancels_schedules(home: Path) -> None:
    async with world(home) as w:
        await w.say("hello", event="e1")
        await w.idle()
        assert w.runtime.schedules is not None
        conversation = (await ada(w)).conversation()
        async with admin_api(w) as api:
            assert (
                await api.get("/admin/schedules", headers={"Authorization": "Bearer wrong"})
            ).status_code == 401
            zone = await api.put("/admin/persons/p-x/timezone", json={"timezone": "Europe/Berlin"})
            assert zone.json() == {"person_id": "p-x", "timezone": "Europe/Berlin", "own": True}
            added = await api.post(
                "/admin/schedules",
                json={"conversation_id": conversation, "in": "10 minutes", "prompt": "check in"},
            )
            assert added.status_code == 201
            schedule = added.json()["schedule"]
            assert (schedule["action"], schedule["created_by"], schedule["state"]) == (
                "prompt",
                "admin:api",
                "active",
            )
            assert schedule["next_run_local"] == "2030-03-17 17:56 UTC"
            missing = await api.post(
                "/admin/schedules", json={"conversation_id": "nope", "at": "09:00", "message": "x"}
            )
            assert missing.status_code == 409 and "does not exist" in missing.json()["detail"]
            listed = await api.get("/admin/schedules", params={"state": "active"})
            assert [item["id"] for item in listed.json()["items"]] == [schedule["id"]]
            await w.tick(advance_s=600)
            await w.idle()
            shown = (await api.get(f"/admin/schedules/{schedule['id']}")).json()
            (run,) = shown["runs"]
            assert (shown["schedule"]["state"], run["task"], run["delivery"]) == ("done", "ran", "sent")
            assert (await api.post(f"/admin/schedules/runs/{run['id']}/resend")).status_code == 409
            assert (await api.delete(f"/admin/schedules/{schedule['id']}")).status_code == 404  # done
            assert (await api.get("/admin/schedules/999")).status_code == 404


async def test_the_cli_adds_lists_shows_and_cancels_schedules(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with world(home) as w:
        await w.say("hello", event="e1")
        await w.idle()
        conversation = (await ada(w)).conversation()
    deliverable_test_platform(home)
    capsys.readouterr()
    flags = ("--cron", "0 9 * * 1", "--message", "standup", "--json")
    assert await cli(home, "add", "--conversation", conversation, *flags) == 0
    added = json.loads(capsys.readouterr().out)
    assert (added["kind"], added["spec"], added["created_by"]) == ("cron", "0 9 * * 1", "admin:cli")
    assert await cli(home, "list") == 0
    assert capsys.readouterr().out.startswith(
        f"#{added['id']} message 'standup' — cron 0 9 * * 1 (at 09:00 on Monday"
    )
    assert await cli(home, "show", str(added["id"]), "--json") == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []
    assert await cli(home, "cancel", str(added["id"])) == 0
    assert "cancelled by admin:cli" in capsys.readouterr().out
    assert await cli(home, "list") == 0
    assert capsys.readouterr().out.strip() == "no open schedules"
    assert await cli(home, "cancel", str(added["id"])) == 2
    assert capsys.readouterr().err.strip() == f"mnemogate: error: There is no open schedule #{added['id']}."
