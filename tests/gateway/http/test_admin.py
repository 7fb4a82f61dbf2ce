"""The admin API: bearer token, loopback rule, and what an operator reads and changes through it."""

from __future__ import annotations

import dataclasses
import secrets

import httpx
import pytest
from pydantic import SecretStr

from agent_core.storage import NewMessage, Principal
from gateway.config import ConfigError
from gateway.http import AdminExposureError, Readiness, check_exposure, create_app, serve_http
from gateway.runtime import Runtime
from tests.gateway.http.conftest import ADMIN_TOKEN, Gateway, build_app


async def _conversation(
    runtime: Runtime, chat: str, person: str, texts: list[str], platform: str = "web"
) -> str:
    principal = Principal(person_id=person, platform=platform, user_id=chat, chat_id=chat, chat_type="dm")
    record = await runtime.storage.agent.ensure_conversation(f"{platform}:-:dm:{chat}:-:-", principal)
    for text in texts:
        await runtime.storage.agent.append_message(
            record.tip_session_id, NewMessage(role="user", content=text)
        )
        await runtime.storage.agent.append_message(
            record.tip_session_id, NewMessage(role="assistant", content=f"re: {text}")
        )
    return record.id


async def _person(runtime: Runtime, name: str, first: str, *more: str) -> str:
    """A person seen first as account ``first`` (``platform:id``) who linked the ``more`` accounts."""
    identity = runtime.storage.identity
    platform, _, account_id = first.partition(":")
    person = await identity.ensure_account(platform, account_id, name)
    for account in more:
        issued = await identity.issue_link_code(
            person, ttl_s=600, per_window=10, window_s=600, new_code=lambda: secrets.token_hex(4)
        )
        assert issued.code is not None
        platform, _, account_id = account.partition(":")
        await identity.redeem_link_code(issued.code, platform, account_id)
    return person


async def test_token_is_required_and_checked(gateway: Gateway) -> None:
    async with gateway.client() as anonymous:
        assert (await anonymous.get("/admin/conversations")).status_code == 401
        wrong = await anonymous.get("/admin/conversations", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert wrong.headers["www-authenticate"] == "Bearer"
        basic = await anonymous.get("/admin/persons", headers={"Authorization": f"Basic {ADMIN_TOKEN}"})
        assert basic.status_code == 401
    async with gateway.admin() as admin:
        assert (await admin.get("/admin/conversations")).status_code == 200


async def test_without_a_configured_token_the_admin_api_answers_401_to_everyone(runtime: Runtime) -> None:
    gw = build_app(runtime, admin_token=None)
    local = httpx.ASGITransport(app=gw.app, client=("127.0.0.1", 5000))
    remote = httpx.ASGITransport(app=gw.app, client=("10.1.2.3", 5000))
    for transport in (local, remote):
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            refused = await client.get("/admin/persons")
            assert refused.status_code == 401
            assert "http.admin_token" in refused.text
            assert (await client.get("/healthz")).status_code == 200


async def test_refuses_to_start_on_a_public_address_without_a_token(runtime: Runtime) -> None:
    gw = build_app(runtime, admin_token=None)
    with pytest.raises(AdminExposureError, match=r"http\.admin_token"):
        async with serve_http(gw.app, "0.0.0.0", 0):
            pass
    assert issubclass(AdminExposureError, ConfigError)
    check_exposure("0.0.0.0", SecretStr("set"))
    check_exposure("127.0.0.1", None)


async def test_the_exposure_check_fails_closed_for_any_app() -> None:
    # An app that mounts neither the admin API nor /v1 (health and webhooks only) is refused all the same.
    with pytest.raises(AdminExposureError, match=r"http\.admin_token"):
        async with serve_http(create_app(Readiness({})), "0.0.0.0", 0):
            pass
    check_exposure("::1", None)


async def test_conversations_filters_and_paging(gateway: Gateway) -> None:
    rt = gateway.runtime
    ids = [await _conversation(rt, f"chat{i}", "alice" if i % 2 else "bob", [f"hi {i}"]) for i in range(5)]
    tg = await _conversation(rt, "tg1", "alice", ["from telegram"], platform="telegram")
    await rt.storage.agent.end_conversation(ids[0], "reset")
    async with gateway.admin() as admin:
        everything = (await admin.get("/admin/conversations")).json()
        page1 = (await admin.get("/admin/conversations", params={"limit": 4})).json()
        page2 = (await admin.get("/admin/conversations", params={"limit": 4, "offset": 4})).json()
        alice_web = (
            await admin.get("/admin/conversations", params={"person": "alice", "platform": "web"})
        ).json()
        ended = (await admin.get("/admin/conversations", params={"active": "false"})).json()
    assert everything["total"] == 6
    assert {c["id"] for c in page1["items"]} | {c["id"] for c in page2["items"]} == {*ids, tg}
    assert page1["next_offset"] == 4 and page2["next_offset"] is None
    assert {c["id"] for c in alice_web["items"]} == {ids[1], ids[3]}
    assert [c["id"] for c in ended["items"]] == [ids[0]]
    assert everything["items"][0]["message_count"] == 2


async def test_one_conversation_with_segments_usage_and_paged_messages(gateway: Gateway) -> None:
    rt = gateway.runtime
    cid = await _conversation(rt, "c", "alice", [f"line {i}" for i in range(6)])
    from agent_core.storage import ModelCall

    tip = await rt.storage.agent.resolve_tip(cid)
    await rt.storage.agent.add_usage(
        tip.id, ModelCall(input_tokens=100, output_tokens=20, cache_read_tokens=80)
    )
    async with gateway.admin() as admin:
        detail = (await admin.get(f"/admin/conversations/{cid}")).json()
        first = (await admin.get(f"/admin/conversations/{cid}/messages", params={"limit": 5})).json()
        rest = (
            await admin.get(f"/admin/conversations/{cid}/messages", params={"after": first["next_after"]})
        ).json()
        missing = await admin.get("/admin/conversations/nope")
    assert detail["lineage"] == [tip.id]
    assert detail["usage"]["cache_read_tokens"] == 80 and detail["usage"]["input_tokens"] == 100
    assert len(first["items"]) == 5 and len(rest["items"]) == 7
    assert rest["next_after"] is None
    assert [m["content"] for m in first["items"][:2]] == ["line 0", "re: line 0"]
    assert missing.status_code == 404


async def test_search_finds_conversations_by_text(gateway: Gateway) -> None:
    rt = gateway.runtime
    wanted = await _conversation(rt, "a", "alice", ["my favourite volcano is Eyjafjallajökull"])
    await _conversation(rt, "b", "bob", ["nothing to see"])
    assert await rt.storage.search.wait_indexed(10)
    async with gateway.admin() as admin:
        found = (await admin.get("/admin/search", params={"q": "which volcano"})).json()
        weird = await admin.get("/admin/search", params={"q": 'AND OR "( NEAR'})
    assert [c["conversation_id"] for c in found["conversations"]] == [wanted]
    assert "volcano" in found["conversations"][0]["snippets"][0]["text"]
    assert found["conversations"][0]["person_id"] == "alice"
    assert weird.status_code == 200


async def test_person_memory_view_edit_and_audit(gateway: Gateway) -> None:
    alice = await _person(gateway.runtime, "Alice", "web:abc", "telegram:42")
    async with gateway.admin() as admin:
        persons = (await admin.get("/admin/persons")).json()
        added = await admin.put(
            f"/admin/persons/{alice}/memory",
            json={"action": "add", "target": "user", "content": "Prefers tea"},
        )
        replaced = await admin.put(
            f"/admin/persons/{alice}/memory",
            json={"action": "replace", "target": "user", "old_text": "tea", "content": "Prefers green tea"},
        )
        bad = await admin.put(
            f"/admin/persons/{alice}/memory",
            json={"action": "remove", "target": "user", "old_text": "coffee"},
        )
        view = (await admin.get(f"/admin/persons/{alice}/memory")).json()
        unknown = await admin.get("/admin/persons/mallory/memory")
    assert persons["items"][0]["accounts"] == ["telegram:42", "web:abc"]
    assert added.status_code == 200 and replaced.status_code == 200
    assert bad.status_code == 422
    user_store = next(s for s in view["stores"] if s["target"] == "user")
    assert user_store["entries"] == ["Prefers green tea"]
    assert [(a["actor"], a["action"]) for a in view["audit"]][:2] == [("admin", "replace"), ("admin", "add")]
    assert unknown.status_code == 404


@dataclasses.dataclass(frozen=True)
class _Request:
    code: str
    platform: str
    user_id: str


class _Book:
    """A minimal pairing book with the interface the admin API calls (the real one is H10's)."""

    def __init__(self) -> None:
        self.pending = {"ABCD1234": _Request("ABCD1234", "telegram", "99")}
        self.approved: list[str] = []

    async def list_pending(self) -> list[_Request]:
        return list(self.pending.values())

    async def approve(self, code: str) -> _Request:
        request = self.pending.pop(code)
        self.approved.append(code)
        return request

    async def deny(self, code: str) -> _Request:
        return self.pending.pop(code)


async def test_pairing_requests_are_listed_and_approved(runtime: Runtime) -> None:
    book = _Book()
    gw = build_app(runtime, pairing=book)
    transport = httpx.ASGITransport(app=gw.app)
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://gw", headers=headers) as admin:
        listed = (await admin.get("/admin/pairing")).json()
        approved = await admin.post("/admin/pairing/ABCD1234/approve")
        again = await admin.post("/admin/pairing/ABCD1234/deny")
    assert listed["pending"] == [{"code": "ABCD1234", "platform": "telegram", "user_id": "99"}]
    assert approved.json()["request"]["user_id"] == "99"
    assert book.approved == ["ABCD1234"]
    assert again.status_code == 404


async def test_reset_ends_the_conversation(gateway: Gateway) -> None:
    cid = await _conversation(gateway.runtime, "r", "alice", ["hello"])
    async with gateway.admin() as admin:
        first = (await admin.post(f"/admin/conversations/{cid}/reset")).json()
        second = (await admin.post(f"/admin/conversations/{cid}/reset")).json()
    assert first == {"conversation_id": cid, "reset": True}
    assert second["reset"] is False
    assert await gateway.runtime.storage.agent.live_conversation("web:-:dm:r:-:-") is None
