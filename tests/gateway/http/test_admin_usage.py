"""The admin API's usage and cost: everyone's by person (the default) or any other grouping, a period or an
epoch range, one person's by day; unknown persons and contradictory ranges are problems, not guesses."""

from __future__ import annotations

import time

from agent_core.storage import ModelCall, Principal
from gateway.runtime import Runtime
from tests.gateway.http.conftest import Gateway

from .test_admin import _person


async def _spend(runtime: Runtime, person: str, platform: str, *calls: ModelCall) -> None:
    principal = Principal(person_id=person, platform=platform, user_id=person, chat_id=person, chat_type="dm")
    record = await runtime.storage.agent.ensure_conversation(f"{platform}:-:dm:{person}:-:-", principal)
    for call in calls:
        await runtime.storage.agent.add_usage(record.tip_session_id, call)


async def test_everyones_usage_by_person_and_by_model_today(gateway: Gateway) -> None:
    rt = gateway.runtime
    ana = await _person(rt, "Ana", "web:ana")
    bob = await _person(rt, "Bob", "web:bob")
    await _spend(rt, ana, "web", ModelCall(1_000, 100, cost_usd=0.5, model="gpt-4o"))
    await _spend(rt, bob, "telegram", ModelCall(300, 30, cost_usd=1.25, model="claude-sonnet-4-5"))
    await _spend(rt, bob, "telegram", ModelCall(10, 1, model="my-llama", kind="flush"))
    async with gateway.admin() as admin:
        by_person = (await admin.get("/admin/usage")).json()
        by_model = (await admin.get("/admin/usage", params={"by": "model", "period": "month"})).json()
        kinds = (await admin.get("/admin/usage", params={"by": "kind", "since": 0})).json()
        later = (await admin.get("/admin/usage", params={"since": time.time() + 3600})).json()
        far = (await admin.get("/admin/usage", params={"since": 0, "until": 7e11})).json()
    assert by_person["by"] == "person" and by_person["timezone"] == "UTC"
    assert [(g["key"], g["calls"], g["cost_usd"], g["unpriced_calls"]) for g in by_person["groups"]] == [
        (bob, 2, 1.25, 1),
        (ana, 1, 0.5, 0),
    ]
    assert by_person["total"]["cost_usd"] == 1.75 and by_person["total"]["cost_complete"] is False
    assert [g["key"] for g in by_model["groups"]] == ["claude-sonnet-4-5", "gpt-4o", "my-llama"]
    assert {g["key"]: g["calls"] for g in kinds["groups"]} == {"turn": 2, "flush": 1}
    assert later["total"]["calls"] == 0
    assert far["until_iso"] is None and far["since_iso"] == "1970-01-01T00:00:00+00:00"
    assert far["total"]["calls"] == 3


async def test_one_persons_usage_by_day_and_the_problems(gateway: Gateway) -> None:
    rt = gateway.runtime
    ana = await _person(rt, "Ana", "web:ana")
    await _spend(rt, ana, "web", ModelCall(1_000, 100, cost_usd=0.5, model="gpt-4o"))
    await _spend(rt, "someone-else", "web", ModelCall(5, 5, cost_usd=9.0, model="gpt-4o"))
    async with gateway.admin() as admin:
        mine = (await admin.get(f"/admin/persons/{ana}/usage", params={"period": "today"})).json()
        missing = await admin.get("/admin/persons/nobody/usage")
        both = await admin.get("/admin/usage", params={"period": "today", "since": 0})
        unknown_group = await admin.get("/admin/usage", params={"by": "weekday"})
    async with gateway.client() as stranger:
        refused = await stranger.get("/admin/usage")
    assert mine["person_id"] == ana and mine["by"] == "day"
    (day,) = mine["groups"]
    assert day["key"] == time.strftime("%Y-%m-%d", time.gmtime()) and day["cost_usd"] == 0.5
    assert missing.status_code == 404 and "nobody" in missing.json()["detail"]
    assert both.status_code == 422 and unknown_group.status_code == 422
    assert refused.status_code == 401
