"""Console sign-ins: keyed, expiring session cookies and the CSRF tokens of their forms.

A sign-in with the admin token gives a cookie ``<payload>.<mac>``: the payload names a random session id
and its expiry, the MAC is HMAC-SHA256 under a key derived from the admin token. Invariants: no cookie
verifies without the token that keyed it (changing ``http.admin_token`` signs every browser out, on every
host, since all hosts derive the same key); a cookie past its expiry, altered in any byte, or signed out in
this process is refused; MACs and CSRF tokens are compared in constant time; the cookie holds no secret a
page can read (HttpOnly) and is sent only to ``/admin`` of this site (SameSite=Strict). A form's CSRF token
is bound to its session, so a token from another session (or none) is refused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import SecretStr

COOKIE = "mnemogate_admin"
COOKIE_PATH = "/admin"
_KEY_CONTEXT = b"mnemogate admin console session v1"
_MAX_REVOKED = 10_000


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    """One signed-in browser: its random id and when it expires (epoch seconds)."""

    id: str
    expires_at: float


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ConsoleSessions:
    """Issues and checks console session cookies for one admin token (None: nobody can sign in)."""

    def __init__(
        self, token: SecretStr | None, *, ttl_s: float, clock: Callable[[], float] = time.time
    ) -> None:
        raw = token.get_secret_value().encode() if token is not None else b""
        self._token = raw
        self._key = hmac.new(raw, _KEY_CONTEXT, hashlib.sha256).digest() if raw else None
        self._ttl_s = ttl_s
        self._clock = clock
        self._revoked: dict[str, float] = {}

    @property
    def enabled(self) -> bool:
        """False until ``http.admin_token`` is set: then the console refuses every sign-in."""
        return self._key is not None

    @property
    def ttl_s(self) -> float:
        return self._ttl_s

    def token_matches(self, presented: str) -> bool:
        """True when ``presented`` is the admin token (constant-time; always False without one)."""
        if not self._token:
            return False
        return hmac.compare_digest(presented.encode(), self._token)

    def issue(self) -> tuple[str, ConsoleSession]:
        """A new session and its cookie value."""
        key = self._required_key()
        session = ConsoleSession(secrets.token_hex(16), self._clock() + self._ttl_s)
        payload = _b64(json.dumps({"sid": session.id, "exp": session.expires_at}).encode())
        return f"{payload}.{self._mac(key, payload)}", session

    def verify(self, cookie: str | None) -> ConsoleSession | None:
        """The session a cookie value stands for, or None (missing, altered, expired, signed out)."""
        if not cookie or self._key is None or cookie.count(".") != 1:
            return None
        payload, mac = cookie.split(".")
        if not hmac.compare_digest(mac.encode(), self._mac(self._key, payload).encode()):
            return None
        try:
            fields = json.loads(_unb64(payload))
            session = ConsoleSession(str(fields["sid"]), float(fields["exp"]))
        except (ValueError, KeyError, TypeError, binascii.Error):
            return None
        if session.expires_at <= self._clock() or session.id in self._revoked:
            return None
        return session

    def revoke(self, session: ConsoleSession) -> None:
        """Sign ``session`` out: its cookie is refused from now on (by this process; the browser drops it)."""
        now = self._clock()
        self._revoked = {sid: until for sid, until in self._revoked.items() if until > now}
        if len(self._revoked) >= _MAX_REVOKED:  # bounded: the oldest sign-outs go first
            for sid in sorted(self._revoked, key=self._revoked.__getitem__)[: _MAX_REVOKED // 10]:
                del self._revoked[sid]
        self._revoked[session.id] = session.expires_at

    def csrf_token(self, session: ConsoleSession) -> str:
        """The token every form of ``session`` carries."""
        return self._mac(self._required_key(), f"csrf:{session.id}")

    def csrf_matches(self, session: ConsoleSession, presented: str | None) -> bool:
        if not presented:
            return False
        return hmac.compare_digest(presented.encode(), self.csrf_token(session).encode())

    def _required_key(self) -> bytes:
        if self._key is None:
            raise RuntimeError("no admin token is configured, so no console session can be issued")
        return self._key

    @staticmethod
    def _mac(key: bytes, text: str) -> str:
        return _b64(hmac.new(key, text.encode(), hashlib.sha256).digest())
