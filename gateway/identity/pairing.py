"""Pairing: DM pairing requests an unknown account opens and an admin approves or denies.

Invariants: an account has at most one request and so one code (re-sending returns it); at most
``codes_per_hour`` new codes per platform per hour, across processes; an account is admitted by pairing
exactly while its request is approved; a decision is recorded with who made it and when.
"""

from __future__ import annotations

import functools

from gateway.contracts import UserRef
from gateway.identity.codes import new_code, normalise_code
from gateway.identity.errors import PairingAlreadyDecidedError, UnknownPairingCodeError
from gateway.storage.pairing import PairingRepository, PairingRequest, PairingState, PairingTicket

_HOUR_S = 3600.0


class Pairing:
    """DM pairing requests of a ``PairingRepository``."""

    def __init__(self, requests: PairingRepository, *, codes_per_hour: int = 5, code_length: int = 8) -> None:
        self._requests = requests
        self._codes_per_hour = codes_per_hour
        self._code_length = code_length

    async def request(self, user: UserRef) -> PairingTicket:
        """The account's request, opening a pending one (new code) if it has none and the budget allows."""
        return await self._requests.open_request(
            user.platform,
            user.user_id,
            user.display_name,
            per_window=self._codes_per_hour,
            window_s=_HOUR_S,
            new_code=functools.partial(new_code, self._code_length),
        )

    async def is_approved(self, user: UserRef) -> bool:
        """True when an admin approved this account."""
        return await self._requests.is_approved(user.platform, user.user_id)

    async def get(self, code: str) -> PairingRequest | None:
        """The request with this code (any spelling a person might type), or None."""
        normal = normalise_code(code)
        return None if normal is None else await self._requests.get(normal)

    async def list_pending(self) -> list[PairingRequest]:
        """Requests waiting for an admin, oldest first."""
        return await self.list_requests(PairingState.PENDING)

    async def list_requests(self, state: PairingState | None = None) -> list[PairingRequest]:
        """Requests in ``state`` (all when None), oldest first."""
        return list(await self._requests.list_requests(state))

    async def approve(self, code: str, *, by: str = "admin") -> PairingRequest:
        """Admit the account behind ``code`` (also reverses an earlier denial)."""
        return await self._decide(code, PairingState.APPROVED, by)

    async def deny(self, code: str, *, by: str = "admin") -> PairingRequest:
        """Refuse the account behind ``code`` (also revokes an earlier approval)."""
        return await self._decide(code, PairingState.DENIED, by)

    async def _decide(self, code: str, state: PairingState, by: str) -> PairingRequest:
        normal = normalise_code(code)
        if normal is None:
            raise UnknownPairingCodeError(
                f"'{code}' is not a pairing code (codes are {self._code_length} letters/digits)"
            )
        decision = await self._requests.decide(normal, state, by)
        if decision is None:
            raise UnknownPairingCodeError(f"no pairing request has code {normal}")
        if decision.previous is state:
            raise PairingAlreadyDecidedError(f"pairing code {normal} is already {state.value}")
        return decision.request
