"""A SQLite deployment's client key is ``<home>/client_ids.key``: private, created once, never rewritten."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gateway.storage import ClientKeyUnusableError
from gateway.storage.sqlite.client_key_file import KEY_FILENAME, ClientKeyFile


def test_the_key_file_is_created_private_once(home: Path) -> None:
    path = home / KEY_FILENAME
    assert ClientKeyFile(path).read_or_create(b"a" * 32) == b"a" * 32
    assert path.stat().st_mode & 0o777 == 0o600 and path.read_bytes() == b"a" * 32
    assert ClientKeyFile(path).read_or_create(b"b" * 32) == b"a" * 32  # the next start reads the same key


def test_processes_starting_together_agree_on_one_key_and_leave_no_temp_file(home: Path) -> None:
    path = home / KEY_FILENAME
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda n: ClientKeyFile(path).read_or_create(bytes([n]) * 32), range(16)))
    assert len(keys) == 1
    assert [p.name for p in home.iterdir()] == [KEY_FILENAME]


def test_a_damaged_key_file_is_a_clear_error_not_a_silent_new_key(home: Path) -> None:
    (home / KEY_FILENAME).write_bytes(b"short")
    with pytest.raises(ClientKeyUnusableError, match=r"damaged.*restore it from a backup"):
        ClientKeyFile(home / KEY_FILENAME).read_or_create(b"n" * 32)
    assert (home / KEY_FILENAME).read_bytes() == b"short"
