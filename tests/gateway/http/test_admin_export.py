"""Downloading one person's export over real HTTP: the JSON API with the admin token and the console's
person page when signed in; the same archive as ``mnemogate export`` (everything of the person, nothing of
another's); an unknown person is a 404 problem, and nothing is served without the token or a session."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.gateway.cli.test_export_command import check_archive, seed_two_people
from tests.gateway.http.conftest import ADMIN_TOKEN, Gateway

PROBLEM = "application/problem+json"


def saved(body: bytes, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(body)
    assert zipfile.is_zipfile(path)
    return path


async def test_the_api_downloads_the_persons_archive(gateway: Gateway, tmp_path: Path) -> None:
    ada, bob, thread = await seed_two_people(gateway.runtime.storage)
    async with gateway.admin() as admin:
        answer = await admin.get(f"/admin/persons/{ada}/export")
        missing = await admin.get("/admin/persons/p-nobody/export")
        schema = (await admin.get("/admin/openapi.json")).json()
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/zip"
    disposition = answer.headers["content-disposition"]
    assert disposition.startswith("attachment;") and f"mnemogate-person-{ada}-" in disposition
    assert answer.headers["cache-control"] == "no-store"
    check_archive(saved(answer.content, tmp_path, "api.zip"), ada, bob, thread)
    assert missing.status_code == 404 and missing.headers["content-type"] == PROBLEM
    assert missing.json()["detail"] == "no person 'p-nobody'"
    assert "/admin/persons/{person_id}/export" in schema["paths"]
    async with gateway.client() as stranger:
        refused = await stranger.get(f"/admin/persons/{ada}/export")
    assert refused.status_code == 401 and b"ADA" not in refused.content


async def test_the_console_person_page_offers_the_download(gateway: Gateway, tmp_path: Path) -> None:
    ada, bob, thread = await seed_two_people(gateway.runtime.storage)
    async with gateway.client() as stranger:
        bounced = await stranger.get(f"/admin/ui/persons/{ada}/export")
    assert bounced.status_code == 303 and bounced.headers["location"].startswith("/admin/sign-in")
    async with gateway.client() as browser:
        signed = await browser.post("/admin/sign-in", data={"token": ADMIN_TOKEN, "next": "/admin/"})
        assert signed.status_code == 303, signed.text
        page = await browser.get(f"/admin/ui/persons/{ada}")
        assert f'href="/admin/ui/persons/{ada}/export"' in page.text
        answer = await browser.get(f"/admin/ui/persons/{ada}/export")
        missing = await browser.get("/admin/ui/persons/p-nobody/export")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/zip"
    check_archive(saved(answer.content, tmp_path, "console.zip"), ada, bob, thread)
    assert missing.status_code == 404 and "no person" in missing.text
