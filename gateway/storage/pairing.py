"""The pairing port: DM pairing requests an admin decides, and the refusal notices sent to unknown accounts.

Invariants every backend keeps: one pairing request per platform account, so asking again returns the
same code; a new code is issued only while fewer than ``per_window`` codes were issued on that platform
within ``window_s`` (checked and stored in one transaction, so concurrent processes cannot overshoot);
an account is admitted by pairing exactly while its request is ``approved``; a decision records who
made it and when; a notice of one kind reaches an account at most once per ``interval_s``. Windows,
intervals and decision times are measured on the backend's clock.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class PairingState(enum.StrEnum):
    """Where a pairing request stands."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"


@dataclass(frozen=True, slots=True)
class PairingRequest:
    """One DM pairing request, as stored and as the CLI and the admin API show it."""

    code: str
    platform: str
    account_id: str
    display_name: str | None
    created_at: float
    state: PairingState
    decided_at: float | None = None
    decided_by: str | None = None

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


@dataclass(frozen=True, slots=True)
class PairingTicket:
    """What asking for a code gave: the account's request (None when the platform's budget is spent)."""

    request: PairingRequest | None
    issued: bool
    retry_after_s: float = 0.0


@dataclass(frozen=True, slots=True)
class PairingDecision:
    """A decided request and the state it had before (equal to its state when nothing changed)."""

    previous: PairingState
    request: PairingRequest


class PairingRepository(Protocol):
    """Pairing requests and access-notice cooldowns, kept by a storage backend."""

    async def open_request(
        self,
        platform: str,
        account_id: str,
        display_name: str | None,
        *,
        per_window: int,
        window_s: float,
        new_code: Callable[[], str],
    ) -> PairingTicket:
        """The account's request, or a new pending one with a code from ``new_code`` if the budget allows.

        One transaction: the existing request is looked up, the platform's codes within the last
        ``window_s`` counted, and the new request stored.
        """
        ...

    async def is_approved(self, platform: str, account_id: str) -> bool:
        """True while an admin's approval of this account's request stands."""
        ...

    async def get(self, code: str) -> PairingRequest | None:
        """The request with this (normalised) code, or None."""
        ...

    async def list_requests(self, state: PairingState | None = None) -> tuple[PairingRequest, ...]:
        """Requests in ``state`` (all when None), oldest first."""
        ...

    async def decide(self, code: str, state: PairingState, decided_by: str) -> PairingDecision | None:
        """Set a request's state, recording who decided and when; None for an unknown code.

        One transaction; a request already in ``state`` is left as it is (``previous`` is then ``state``).
        """
        ...

    async def claim_notice(self, platform: str, account_id: str, kind: str, *, interval_s: float) -> bool:
        """True, and recorded, if this account was not sent a ``kind`` notice within ``interval_s``.

        One transaction, so two processes never both send one notice.
        """
        ...
