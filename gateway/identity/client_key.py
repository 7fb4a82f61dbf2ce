"""ClientKey: the deployment's secret that turns web chat cookies and API tokens into account ids.

Invariants: a cookie or token is never stored, shown or logged — only ``HMAC-SHA256(key, purpose, value)``
truncated to an id is (a web account ``h.<32 hex>``, an API client ``<16 hex>``); every process of a
deployment, on every host, gives the same id for the same value, also after restarts, because the key is
the one the storage keeps (``gateway.storage.client_keys``: a file in a SQLite home, a row on PostgreSQL),
created on first start and never rewritten. Because an id is derived rather than looked up by the secret,
finding an account compares no secret and takes the same time whatever was presented: a lower-case or
one-letter-off copy of a cookie is just another account.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from gateway.identity.errors import IdentityError
from gateway.storage.client_keys import KEY_BYTES, ClientKeyStore

WEB_ACCOUNT_PREFIX = "h."
_WEB_ID_HEX = 32  # 128 bits: collisions between browsers are out of reach
_API_ID_HEX = 16  # 64 bits: tells a handful of configured tokens apart, reveals nothing of them


class ClientKeyError(IdentityError):
    """The key is unusable (too short); the message says what to do."""


class ClientKey:
    """HMAC over the deployment's secret; ``for_deployment`` reads (or creates) it through the storage."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < KEY_BYTES:
            raise ClientKeyError(f"a client key needs {KEY_BYTES} bytes, not {len(secret)}")
        self._secret = secret

    @classmethod
    def ephemeral(cls) -> ClientKey:
        """A key for this process only (an app without a home); ids change on restart."""
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    async def for_deployment(cls, store: ClientKeyStore) -> ClientKey:
        """The key every process of the deployment shares (a new random one stored on the first start)."""
        return cls(await store.keep(secrets.token_bytes(KEY_BYTES)))

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
