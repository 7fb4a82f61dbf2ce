"""NewPersonBudget: how many persons the gateway has never seen one client address may bring in.

Invariants: an account that already exists is never limited here (the per-person ``rate_limit`` applies
to its messages); an unknown account costs one token of its client address's bucket
(``rate_limit.new_web_persons``), so a flood of cookie-less or made-up-cookie requests from one address
creates at most ``capacity`` persons and then one per ``refill_s``; the check only reads the store.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gateway.access.rate_limit import RateDecision, RateLimiter
from gateway.access.settings import NewPersonsSettings
from gateway.storage.identity import IdentityRepository

_ALLOWED = RateDecision(True)


class NewPersonBudget:
    """Per-address token buckets charged only for accounts the store does not know yet."""

    def __init__(
        self,
        identity: IdentityRepository | None,
        settings: NewPersonsSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._identity = identity
        self._settings = settings or NewPersonsSettings()
        self._buckets = RateLimiter(self._settings, clock)

    async def check(self, platform: str, account_id: str, address: str | None) -> RateDecision:
        """Allowed for a known account; else one token of ``address``'s bucket, if there is one."""
        if not self._settings.enabled:
            return _ALLOWED
        known = self._identity is not None and await self._identity.account_person(platform, account_id)
        if known:
            return _ALLOWED
        return self._buckets.check(f"address:{address or 'unknown'}")
