"""The deployment's client key: cookies and API tokens become stable account ids that reveal neither."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from agent_core.storage.sqlite.backup import backup_home, restore_home
from gateway.identity import ClientKey, ClientKeyError, is_web_account
from gateway.storage.sqlite import open_state_store
from gateway.storage.sqlite.client_key_file import KEY_FILENAME, ClientKeyFile


def test_ids_depend_on_the_exact_value_and_on_the_key() -> None:
    cookie = "AbCdEfGhIjKlMnOpQrStUvWxYz012345"
    key, other = ClientKey(b"k" * 32), ClientKey(b"o" * 32)
    assert key.web_account(cookie) == ClientKey(b"k" * 32).web_account(cookie)
    assert is_web_account(key.web_account(cookie)) and cookie not in key.web_account(cookie)
    assert key.web_account(cookie) != key.web_account(cookie.lower())
    assert key.web_account(cookie) != other.web_account(cookie)
    token = "sk-live-token-9876543210"
    fingerprint = key.api_client(token)
    assert fingerprint == key.api_client(token) and token not in fingerprint
    assert fingerprint != key.api_client("sk-live-token-9876543211") != key.api_client(None)


def test_a_key_shorter_than_32_bytes_is_refused() -> None:
    with pytest.raises(ClientKeyError, match="32 bytes"):
        ClientKey(b"short")


async def test_a_restored_backup_keeps_every_browser_its_account(tmp_path: Path) -> None:
    home, copy, restored = tmp_path / "home", tmp_path / "backup", tmp_path / "restored"
    home.mkdir()
    async with open_state_store(home):
        pass
    cookie = secrets.token_urlsafe(24)
    before = (await ClientKey.for_deployment(ClientKeyFile(home / KEY_FILENAME))).web_account(cookie)
    backup_home(home, copy)
    restore_home(copy, restored)
    after = await ClientKey.for_deployment(ClientKeyFile(restored / KEY_FILENAME))
    assert after.web_account(cookie) == before
    assert (restored / KEY_FILENAME).stat().st_mode & 0o777 == 0o600
