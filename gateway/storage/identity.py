"""The identity port: persons, their platform accounts, one-time link codes and the re-keying of account ids.

Invariants every backend keeps: an account belongs to exactly one person, and is created together with
that person in one transaction, so concurrent first sights of one account (in any process) agree on one
person; an account moves to another person only by redeeming an open, unexpired link code, in the same
transaction that uses the code up, so a code joins at most one account; only a person's newest code is
open; re-keying rewrites an account id everywhere it is kept, in one transaction, and is idempotent.
Link-code expiry and the issue window are measured on the backend's clock.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class AccountRecord:
    """One platform account and the person it belongs to."""

    platform: str
    account_id: str
    person_id: str
    created_at: float


class RedeemStatus(enum.StrEnum):
    """What redeeming a link code did; only ``LINKED`` changes anything."""

    LINKED = "linked"
    UNKNOWN = "unknown"
    EXPIRED = "expired"
    USED = "used"
    SAME_PERSON = "same_person"


@dataclass(frozen=True, slots=True)
class Redemption:
    """The outcome of one redemption: the code's person and the account's previous person (if any)."""

    status: RedeemStatus
    person_id: str | None = None
    previous_person_id: str | None = None


@dataclass(frozen=True, slots=True)
class IssuedLinkCode:
    """A new code, or None when the person's budget is spent; ``retry_after_s`` says when it frees up."""

    code: str | None
    retry_after_s: float = 0.0


class IdentityRepository(Protocol):
    """Persons, accounts and link codes, kept by a storage backend."""

    async def account_person(self, platform: str, account_id: str) -> str | None:
        """The person id of an account, or None for an account never seen (nothing is created)."""
        ...

    async def ensure_account(self, platform: str, account_id: str, display_name: str | None) -> str:
        """The account's person id, creating a new person with the account on first sight.

        One transaction: the person and the account are created together, so concurrent callers for
        one new account (in any process) all get the same person.
        """
        ...

    async def accounts_of(self, person_id: str) -> tuple[AccountRecord, ...]:
        """Every account of a person, oldest first."""
        ...

    async def issue_link_code(
        self,
        person_id: str,
        *,
        ttl_s: float,
        per_window: int,
        window_s: float,
        new_code: Callable[[], str],
    ) -> IssuedLinkCode:
        """A code from ``new_code``, open for ``ttl_s``, that voids the person's older open codes.

        One transaction: unless the person was issued ``per_window`` codes within the last ``window_s``
        (then no code, and the seconds until the oldest of them leaves the window), store the code and
        void every other open code of the person.
        """
        ...

    async def void_link_code(self, code: str, reason: str) -> bool:
        """Use up an open code without linking anything (``reason`` is recorded); True if it was open."""
        ...

    async def redeem_link_code(self, code: str, platform: str, account_id: str) -> Redemption:
        """Join the account (created if new) to the code's person and use up the code.

        One transaction: the code is checked (known, unused, unexpired), the account moved or created,
        and the code marked used by this account. The account's previous person is left as it is.
        """
        ...

    async def platform_account_ids(self, platform: str) -> frozenset[str]:
        """Every account id of ``platform`` the store mentions: accounts, notices, pairing, event ids."""
        ...

    async def rekey_accounts(self, platform: str, forms: Callable[[str], Mapping[str, str]]) -> int:
        """Give accounts of ``platform`` new ids wherever ids are kept; how many account ids were re-keyed.

        ``forms(account_id)`` maps each form the id takes where it is kept (as is, and as it appears
        inside a session key) to the same form of its new id; an empty mapping keeps the id. Old forms
        are replaced as whole tokens (runs of letters, digits, ``_``, ``-`` and ``%``), never inside
        another id, and the backend leaves no copy of an old form readable in its files where it can.
        One transaction: the platform's ids are read and every row mentioning a renamed id rewritten.
        """
        ...
