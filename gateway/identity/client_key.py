"""ClientKey: the per-home secret that turns web chat cookies and API tokens into account ids.

Invariants: a cookie or token is never stored, shown or logged — only ``HMAC-SHA256(key, purpose, value)``
truncated to an id is (a web account ``h.<32 hex>``, an API client ``<16 hex>``); the same home gives the
same id for the same value in every process and after restarts; the key is 32 random bytes in
``<home>/client_ids.key`` (mode 0600), created atomically on first start and never rewritten. Because an
id is derived rather than looked up by the secret, finding an account compares no secret and takes the
same time whatever was presented: a lower-case or one-letter-off copy of a cookie is just another account.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from agent_core.fsync import fsync_directory
from gateway.identity.errors import IdentityError

KEY_FILENAME = "client_ids.key"
WEB_ACCOUNT_PREFIX = "h."
_KEY_BYTES = 32
_WEB_ID_HEX = 32  # 128 bits: collisions between browsers are out of reach
_API_ID_HEX = 16  # 64 bits: tells a handful of configured tokens apart, reveals nothing of them


class ClientKeyError(IdentityError):
    """The key file cannot be read, created, or is damaged; the message says what to do."""


class ClientKey:
    """HMAC over one home's secret; ``for_home`` reads (or creates) it."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < _KEY_BYTES:
            raise ClientKeyError(f"a client key needs {_KEY_BYTES} bytes, not {len(secret)}")
        self._secret = secret

    @classmethod
    def ephemeral(cls) -> ClientKey:
        """A key for this process only (an app without a home); ids change on restart."""
        return cls(secrets.token_bytes(_KEY_BYTES))

    @classmethod
    def for_home(cls, root: Path) -> ClientKey:
        """The home's key from ``client_ids.key``, created (0600) on first use."""
        path = root / KEY_FILENAME
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = _create(path)
        except OSError as exc:
            raise ClientKeyError(f"{path}: cannot read the client key ({exc.strerror})") from exc
        if len(data) != _KEY_BYTES:
            raise ClientKeyError(
                f"{path} is damaged ({len(data)} bytes, expected {_KEY_BYTES}): restore it from a backup; "
                "deleting it makes every browser and API client start a new conversation"
            )
        return cls(data)

    def web_account(self, cookie: str) -> str:
        """The account id of the browser holding ``cookie``."""
        return WEB_ACCOUNT_PREFIX + self._digest(b"web-cookie", cookie)[:_WEB_ID_HEX]

    def api_client(self, token: str | None) -> str:
        """A fingerprint of the bearer token a request presented ("" or None: no token)."""
        return self._digest(b"api-token", token or "")[:_API_ID_HEX]

    def _digest(self, purpose: bytes, value: str) -> str:
        message = purpose + b"\x00" + value.encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()


def is_web_account(account_id: str) -> bool:
    """True for an id made by ``web_account``; earlier versions stored the cookie itself, which has no dot."""
    return account_id.startswith(WEB_ACCOUNT_PREFIX)


def _create(path: Path) -> bytes:
    """Write a new key to a private temp file and link it into place; a concurrent creator's key wins."""
    secret = secrets.token_bytes(_KEY_BYTES)
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
        raise ClientKeyError(f"{path}: cannot create the client key ({exc.strerror})") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
