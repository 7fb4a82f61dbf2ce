"""Accounts: platform account -> person resolution, admin status, and joining accounts with /link codes.

Invariants: an account resolves to the person it was created with until it redeems a link code, and to
no other; a person is created on an account's first sight with an unguessable ``p_…`` id; admin status
belongs to the account the message came from (``access.admins``), never inherited through a link, so
redeeming someone's code cannot make them an admin; linking never merges memory — the redeeming
account's previous person keeps its memory and conversations, and the user is told so.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent_core.actor import Actor
from agent_core.memory import MemoryStores
from gateway.contracts import ChatKind, InboundMessage, UserRef
from gateway.identity.codes import new_code, normalise_code
from gateway.identity.errors import LinkError
from gateway.identity.settings import LinkSettings
from gateway.storage.identity import AccountRecord, IdentityRepository, RedeemStatus

_HOUR_S = 3600.0
_GET_NEW = "Send /link on your other account to get a new one."


@dataclass(frozen=True)
class LinkOutcome:
    """A successful redemption: the person the account now belongs to (as the redeeming account's actor)
    and the one it left (if any)."""

    actor: Actor
    previous_person_id: str | None
    previous_has_memory: bool

    def message(self, platform: str) -> str:
        """What to tell the user who redeemed the code."""
        text = (
            f"Linked: this {platform} account now belongs to the same person as the account that issued "
            "the code, and shares its memory."
        )
        if self.previous_has_memory:
            text += (
                " What I remembered for this account before linking was kept separately, not merged "
                f"(person {self.previous_person_id}); an admin can copy anything you still need."
            )
        return text


def account_key(platform: str, user_id: str) -> str:
    """The ``platform:user_id`` form used by ``access.admins`` and in logs."""
    return f"{platform}:{user_id}"


class Accounts:
    """Persons and platform accounts of an ``IdentityRepository``, with one-time /link codes."""

    def __init__(
        self,
        identity: IdentityRepository,
        *,
        admins: Iterable[str] = (),
        link: LinkSettings | None = None,
        memory: MemoryStores | None = None,
    ) -> None:
        self._identity = identity
        self._admins = frozenset(admins)
        self._link = link or LinkSettings()
        self._memory = memory

    def is_admin(self, user: UserRef) -> bool:
        """True when this very account is listed in ``access.admins``."""
        return account_key(user.platform, user.user_id) in self._admins

    async def find_person(self, user: UserRef) -> Actor | None:
        """The account's person acting through it, or None for an account never seen (nothing is created)."""
        person_id = await self._identity.account_person(user.platform, user.user_id)
        return None if person_id is None else self._person(person_id, user)

    async def person_for(self, user: UserRef) -> Actor:
        """The account's person acting through it, created (with the account) on first sight.

        This is where the gateway builds the ``Actor`` every later stage (queue, turn, tools, audit) takes.
        """
        found = await self.find_person(user)
        if found is not None:
            return found
        person_id = await self._identity.ensure_account(user.platform, user.user_id, user.display_name)
        return self._person(person_id, user)

    async def accounts_of(self, person_id: str) -> Sequence[AccountRecord]:
        """Every platform account of a person, oldest first (for /whoami and the admin API)."""
        return await self._identity.accounts_of(person_id)

    async def issue_link_code(self, person: Actor) -> str:
        """A new one-time code for ``person``'s person; older open codes of the person stop working."""
        settings = self._link
        issued = await self._identity.issue_link_code(
            person.person_id,
            ttl_s=settings.ttl_s,
            per_window=settings.codes_per_hour,
            window_s=_HOUR_S,
            new_code=functools.partial(new_code, settings.code_length),
        )
        if issued.code is None:
            minutes = max(1, math.ceil(issued.retry_after_s / 60))
            raise LinkError(
                f"You have asked for {settings.codes_per_hour} link codes in the last hour. "
                f"Please try again in about {minutes} minute{'s' if minutes != 1 else ''}."
            )
        return issued.code

    async def redeem_link_code(self, code: str, user: UserRef) -> Actor:
        """Join ``user``'s account to the person that issued ``code``; LinkError carries a user message."""
        return (await self.link(code, user)).actor

    async def link(self, code: str, user: UserRef) -> LinkOutcome:
        """Like ``redeem_link_code``, also saying which person the account left and whether it had memory."""
        normal = normalise_code(code)
        if normal is None:
            raise LinkError(
                f"'{code.strip()[:20]}' is not a link code: codes are {self._link.code_length} letters "
                "and digits, like /link ABCD2345."
            )
        redemption = await self._identity.redeem_link_code(normal, user.platform, user.user_id)
        status = redemption.status
        if status is RedeemStatus.UNKNOWN:
            raise LinkError(f"That link code is not valid. Check it for typos. {_GET_NEW}")
        if status is RedeemStatus.USED:
            raise LinkError(f"That link code was already used. {_GET_NEW}")
        if status is RedeemStatus.EXPIRED:
            minutes = max(1, round(self._link.ttl_s / 60))
            raise LinkError(f"That link code has expired (codes last {minutes} minutes). {_GET_NEW}")
        assert redemption.person_id is not None
        person = self._person(redemption.person_id, user)
        if status is RedeemStatus.SAME_PERSON:
            raise LinkError("This account is already linked to that person; nothing changed.")
        previous = redemption.previous_person_id
        has_memory = previous is not None and await self._has_own_memory(previous)
        return LinkOutcome(person, previous, has_memory)

    async def handle_link(self, message: InboundMessage, argument: str) -> str:
        """The whole ``/link`` command: no argument issues a code, ``/link CODE`` redeems one.

        Returns the reply text (errors included). Codes are secrets that grant access to a person's
        memory, so they are only issued in a direct message, and a code posted in a group is voided.
        """
        user = message.sender
        in_dm = message.chat.kind is ChatKind.DM
        try:
            if not argument.strip():
                if not in_dm:
                    return "For your privacy, send /link to me in a direct message, not in a group."
                code = await self.issue_link_code(await self.person_for(user))
                minutes = max(1, round(self._link.ttl_s / 60))
                return (
                    f"Your link code is {code}. Within {minutes} minutes, send /link {code} from your other "
                    "account (on any platform) to make both accounts one person with shared memory. "
                    "It works once; keep it private."
                )
            if not in_dm:
                return await self._void_in_group(argument)
            return (await self.link(argument, user)).message(user.platform)
        except LinkError as exc:
            return str(exc)

    async def _void_in_group(self, argument: str) -> str:
        normal = normalise_code(argument)
        if normal is not None:
            await self._identity.void_link_code(normal, reason="shown_in_group")
        return (
            "Link codes only work in a direct message. Because this one was shown in a group, it no longer "
            "works: send /link again on your other account and use the new code in a direct message."
        )

    async def _has_own_memory(self, person_id: str) -> bool:
        """True if the person's own MEMORY.md or USER.md has entries (a shared store is nobody's own)."""
        if self._memory is None:
            return False
        for target in ("memory", "user"):
            view = await self._memory.entries(person_id=person_id, target=target)
            if view.entries and view.usage.path.parent.name == person_id:
                return True
        return False

    def _person(self, person_id: str, user: UserRef) -> Actor:
        return Actor(
            person_id=person_id,
            is_admin=self.is_admin(user),
            platform=user.platform,
            account_id=user.user_id,
            display_name=user.display_name,
        )
