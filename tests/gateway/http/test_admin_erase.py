"""Erasing a person from the admin surface over real HTTP: the JSON API (bearer token, the id repeated in
the body, 404 for an unknown person) and the console (a confirmation page where the id is typed back, a
CSRF-checked form), both running the same eraser as ``mnemogate erase``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr

from agent_core.storage import NewMessage, Principal
from gateway.config import AdminSettings, HttpSettings
from gateway.erasure import PersonEraser
from gateway.http import AdminBackend, Metrics, Readiness, create_app, serve_http
from gateway.runtime import Runtime
from tests.gateway.http.conftest import ADMIN_TOKEN
from tests.gateway.http.test_admin_console import Console, a_conversation, csrf_of


@contextlib.asynccontextmanager
async def served_with_eraser(runtime: Runtime) -> AsyncIterator[Console]:
    backend = AdminBackend(
        runtime.storage.admin,
        runtime.storage.agent,
        runtime.memory,
        runtime.search,
        console=runtime.storage.console,
        settings=AdminSettings(),
        eraser=PersonEraser(runtime.storage, runtime.providers.provider),
    )
    app = create_app(
        Readiness({}),
        http=HttpSettings(admin_token=SecretStr(ADMIN_TOKEN)),
        metrics=Metrics(runtime.storage.admin),
        admin=backend,
    )
    async with serve_http(app, "127.0.0.1", 0) as server:
        port = server.servers[0].sockets[0].getsockname()[1]
        yield Console(runtime, f"http://127.0.0.1:{port}")


@pytest.fixture
async def console(runtime: Runtime) -> AsyncIterator[Console]:
    async with served_with_eraser(runtime) as served:
        yield served


async def a_person(runtime: Runtime, account: str = "ada") -> tuple[str, str]:
    """A web person with a conversation; their id and the conversation's."""
    person = await runtime.storage.identity.ensure_account("web", account, account.title())
    if account == "ada":
        return person, await a_conversation(runtime, person)
    agent = runtime.storage.agent
    principal = Principal(person_id=person, platform="web", user_id=account, chat_id=account, chat_type="dm")
    record = await agent.ensure_conversation(f"web:-:dm:{account}:-:-", principal)
    await agent.append_message(record.tip_session_id, NewMessage(role="user", content="hello"))
    return person, record.id


async def test_the_api_erases_a_person_only_when_the_id_is_repeated(console: Console) -> None:
    person, conversation = await a_person(console.runtime)
    other, kept = await a_person(console.runtime, "bob")
    path = f"/admin/persons/{person}/erase"
    async with console.client() as stranger:
        assert (await stranger.post(path, json={"confirm": person})).status_code == 401
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with console.client() as admin:
        admin.headers.update(headers)
        refused = await admin.post(path, json={"confirm": other})
        assert refused.status_code == 422 and "nothing was erased" in refused.json()["detail"]
        assert await console.runtime.storage.agent.get_conversation(conversation) is not None
        unknown = await admin.post("/admin/persons/p-nobody/erase", json={"confirm": "p-nobody"})
        assert unknown.status_code == 404
        done = await admin.post(path, json={"confirm": person})
    assert done.status_code == 200, done.text
    report = done.json()
    assert (report["person_id"], report["erased_by"], report["complete"]) == (person, "admin:api", True)
    assert report["conversations"] == 1 and report["messages"] > 0 and report["accounts"] == 1
    assert await console.runtime.storage.agent.get_conversation(conversation) is None
    assert await console.runtime.storage.identity.account_person("web", "ada") is None
    assert await console.runtime.storage.agent.get_conversation(kept) is not None


async def test_the_console_asks_for_the_id_and_checks_csrf(console: Console) -> None:
    person, conversation = await a_person(console.runtime)
    page = f"/admin/ui/persons/{person}/erase"
    async with console.signed_in() as browser:
        assert (
            f'href="/admin/ui/persons/{person}/erase"'
            in (await browser.get(f"/admin/ui/persons/{person}")).text
        )
        asked = await browser.get(page)
        assert asked.status_code == 200 and "Type the person id" in asked.text
        csrf = await csrf_of(browser, page)
        forged = await browser.post(page, data={"confirm": person})
        assert forged.status_code == 403
        mistyped = await browser.post(page, data={"confirm": "p-other", "csrf": csrf})
        assert mistyped.status_code == 422 and "nothing was erased" in mistyped.text
        assert await console.runtime.storage.agent.get_conversation(conversation) is not None
        done = await browser.post(page, data={"confirm": person, "csrf": csrf})
        assert done.status_code == 200 and f"Person {person} erased" in done.text
        assert (await browser.get(page)).status_code == 404
    assert await console.runtime.storage.agent.get_conversation(conversation) is None
    (record, *_) = (await console.runtime.storage.console.audit_log(person_id=person)).rows
    assert (record.actor, record.action) == ("admin:console", "erase")
