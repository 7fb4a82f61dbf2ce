"""Pairing: DM pairing requests an unknown account opens and an admin approves or denies.

Invariants: an account has at most one request and so one code (re-sending returns it); at most
``codes_per_hour`` new codes per platform per hour, across processes; an account is admitted by pairing
exactly while its request is approved; a decision is recorded with who made it and when.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from agent_core.storage.sqlite import StateStore
from gateway.contracts import UserRef
from gateway.identity.codes import new_code, normalise_code
from gateway.identity.errors import PairingAlreadyDecidedError, UnknownPairingCodeError
from gateway.storage.sqlite import pairing as rows
from gateway.storage.sqlite.pairing import PairingState

_HOUR_S = 3600.0


@dataclass(frozen=True)
class PairingRequest:
    """One DM pairing request, as the CLI and the admin API show it."""

    code: str
    platform: str
    account_id: str
    display_name: str | None
    created_at: float
    state: PairingState
    decided_at: float | None = None
    decided_by: str | None = None

    @classmethod
    def from_row(cls, row: rows.PairingRow) -> PairingRequest:
        return cls(
            row.code,
            row.platform,
            row.account_id,
            row.display_name,
            row.created_at,
            row.state,
            row.decided_at,
            row.decided_by,
        )

    def to_dict(self) -> dict[str, str | float | None]:
        """JSON-ready form for the CLI's ``--json`` and the admin API."""
        return {
            "code": self.code,
            "platform": self.platform,
            "account_id": self.account_id,
            "display_name": self.display_name,
            "created_at": self.created_at,
            "state": self.state.value,
            "decided_at": self.decided_at,
            "decided_by": self.decided_by,
        }


@dataclass(frozen=True)
class PairingTicket:
    """What asking for a code gave: the account's request (None when the platform's budget is spent)."""

    request: PairingRequest | None
    issued: bool
    retry_after_s: float = 0.0


class Pairing:
    """DM pairing requests on state.db."""

    def __init__(
        self,
        state: StateStore,
        *,
        codes_per_hour: int = 5,
        code_length: int = 8,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._state = state
        self._codes_per_hour = codes_per_hour
        self._code_length = code_length
        self._clock = clock

    async def request(self, user: UserRef) -> PairingTicket:
        """The account's request, opening a pending one (new code) if it has none and the budget allows."""
        opened = await self._state.run_write(
            functools.partial(
                rows.open_request,
                platform=user.platform,
                account_id=user.user_id,
                display_name=user.display_name,
                now=self._clock(),
                window_s=_HOUR_S,
                per_window=self._codes_per_hour,
                new_code=functools.partial(new_code, self._code_length),
            )
        )
        request = None if opened.request is None else PairingRequest.from_row(opened.request)
        return PairingTicket(request, opened.issued, opened.retry_after_s)

    async def is_approved(self, user: UserRef) -> bool:
        """True when an admin approved this account."""
        return await self._state.run_read(
            functools.partial(rows.is_approved, platform=user.platform, account_id=user.user_id)
        )

    async def get(self, code: str) -> PairingRequest | None:
        """The request with this code (any spelling a person might type), or None."""
        normal = normalise_code(code)
        if normal is None:
            return None
        row = await self._state.run_read(functools.partial(rows.request_by_code, code=normal))
        return None if row is None else PairingRequest.from_row(row)

    async def list_pending(self) -> list[PairingRequest]:
        """Requests waiting for an admin, oldest first."""
        return await self.list_requests(PairingState.PENDING)

    async def list_requests(self, state: PairingState | None = None) -> list[PairingRequest]:
        """Requests in ``state`` (all when None), oldest first."""
        found = await self._state.run_read(functools.partial(rows.list_requests, state=state))
        return [PairingRequest.from_row(row) for row in found]

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
        before, after = await self._state.run_write(
            functools.partial(rows.decide, code=normal, state=state, now=self._clock(), decided_by=by)
        )
        if before is None or after is None:
            raise UnknownPairingCodeError(f"no pairing request has code {normal}")
        if before.state is state:
            raise PairingAlreadyDecidedError(f"pairing code {normal} is already {state.value}")
        return PairingRequest.from_row(after)
