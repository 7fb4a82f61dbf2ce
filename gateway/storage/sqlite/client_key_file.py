"""The client key of a SQLite deployment: ``<home>/client_ids.key``, beside state.db, shared by its processes.

Invariants: the file holds exactly the 32 key bytes, mode 0600; it is created atomically (a private temp
file fsynced and hard-linked into place, so a concurrent creator's key wins and both read that one) and
never rewritten; a file of another size is ``ClientKeyUnusableError`` naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from pathlib import Path

from agent_core.fsync import fsync_directory
from gateway.storage.client_keys import KEY_BYTES, ClientKeyUnusableError

KEY_FILENAME = "client_ids.key"


class ClientKeyFile:
    """``ClientKeyStore`` over one key file (``<home>/client_ids.key``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def keep(self, proposed: bytes) -> bytes:
        return await asyncio.to_thread(self.read_or_create, proposed)

    def read_or_create(self, proposed: bytes) -> bytes:
        """The file's key, or ``proposed`` written to a new file when there is none."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = self._create(proposed)
        except OSError as exc:
            raise ClientKeyUnusableError(f"{self.path}: cannot read the client key ({exc.strerror})") from exc
        if len(data) != KEY_BYTES:
            raise ClientKeyUnusableError(
                f"{self.path} is damaged ({len(data)} bytes, expected {KEY_BYTES}): restore it from a "
                "backup; deleting it makes every browser and API client start a new conversation"
            )
        return data

    def _create(self, secret: bytes) -> bytes:
        """Write ``secret`` to a private temp file and link it into place; a concurrent creator's key wins."""
        path = self.path
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, secret)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(temp, path)
            except FileExistsError:
                return path.read_bytes()
            fsync_directory(path.parent)
            return secret
        except OSError as exc:
            raise ClientKeyUnusableError(f"{path}: cannot create the client key ({exc.strerror})") from exc
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
