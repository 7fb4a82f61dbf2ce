"""The per-home client key: cookies and API tokens become stable account ids that reveal neither."""

from __future__ import annotations

import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agent_core.storage.sqlite.backup import backup_home, restore_home
from gateway.identity import KEY_FILENAME, ClientKey, ClientKeyError, is_web_account
from gateway.storage.sqlite import open_state_store


def test_the_key_file_is_created_private_once_and_gives_the_same_ids_after_a_restart(home: Path) -> None:
    cookie = secrets.token_urlsafe(24)
    first = ClientKey.for_home(home).web_account(cookie)
    path = home / KEY_FILENAME
    assert path.stat().st_mode & 0o777 == 0o600 and len(path.read_bytes()) == 32
    assert ClientKey.for_home(home).web_account(cookie) == first  # the next start reads the same key
    assert is_web_account(first) and cookie not in first


def test_processes_starting_together_agree_on_one_key(home: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(lambda _: ClientKey.for_home(home).web_account("c" * 32), range(16)))
    assert len(ids) == 1
    assert [p.name for p in home.iterdir()] == [KEY_FILENAME]  # no temp file left behind


def test_ids_depend_on_the_exact_value_and_on_the_home(tmp_path: Path) -> None:
    cookie = "AbCdEfGhIjKlMnOpQrStUvWxYz012345"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    key, other_home = ClientKey.for_home(tmp_path / "a"), ClientKey.for_home(tmp_path / "b")
    assert key.web_account(cookie) != key.web_account(cookie.lower())
    assert key.web_account(cookie) != other_home.web_account(cookie)
    token = "sk-live-token-9876543210"
    fingerprint = key.api_client(token)
    assert fingerprint == key.api_client(token) and token not in fingerprint
    assert fingerprint != key.api_client("sk-live-token-9876543211") != key.api_client(None)


def test_a_damaged_key_file_is_a_clear_error_not_a_silent_new_key(home: Path) -> None:
    (home / KEY_FILENAME).write_bytes(b"short")
    with pytest.raises(ClientKeyError, match=r"damaged.*restore it from a backup"):
        ClientKey.for_home(home)
    assert (home / KEY_FILENAME).read_bytes() == b"short"


async def test_a_restored_backup_keeps_every_browser_its_account(tmp_path: Path) -> None:
    home, copy, restored = tmp_path / "home", tmp_path / "backup", tmp_path / "restored"
    home.mkdir()
    async with open_state_store(home):
        pass
    cookie = secrets.token_urlsafe(24)
    before = ClientKey.for_home(home).web_account(cookie)
    backup_home(home, copy)
    restore_home(copy, restored)
    assert ClientKey.for_home(restored).web_account(cookie) == before
    assert (restored / KEY_FILENAME).stat().st_mode & 0o777 == 0o600
