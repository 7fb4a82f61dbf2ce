"""AccessControl: decides whether an inbound message's sender may talk to the bot, and what a refusal says.

Invariants: an account is admitted only if it is a configured admin, its platform is open, it is on the
platform's allowlist, or an admin approved its pairing request — and then resolves to its own person;
a refused sender never gets a turn and never gets a person created; refusals in groups and from bots are
silent; in a DM a refused account gets at most one notice of each kind per ``notice_interval_s``
(its pairing code, "pairing is busy", or "not allowed" when ``denied_notice`` is on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agent_core.actor import Actor
from agent_core.memory import MemoryStores
from gateway.access.settings import AccessSettings
from gateway.contracts import ChatKind, InboundMessage, UserRef
from gateway.identity import Accounts, Pairing, PairingState
from gateway.storage.identity import IdentityRepository
from gateway.storage.pairing import PairingRepository

NOT_ALLOWED = "Sorry, I only talk to people the operator of this bot has allowed."


@dataclass(frozen=True)
class Admitted:
    """The sender may talk to the bot, as ``actor`` (its person, acting through this account)."""

    actor: Actor


@dataclass(frozen=True)
class Denied:
    """The sender may not; ``notice`` is the text to send once (None: stay silent).

    ``reason`` is for logs and metrics: "not_allowed", "pairing_pending", "pairing_busy" or "denied".
    """

    notice: str | None
    reason: str = "not_allowed"


class AccessControl:
    """The access policy of ``access`` settings, over the stored accounts and pairing requests."""

    def __init__(
        self,
        settings: AccessSettings,
        identity: IdentityRepository,
        pairing: PairingRepository,
        *,
        memory: MemoryStores | None = None,
    ) -> None:
        self._settings = settings
        self._requests = pairing
        # ``memory`` lets /link tell a user that their account's earlier memory was kept, not merged.
        self.accounts = Accounts(identity, admins=settings.admins, link=settings.link, memory=memory)
        self.pairing = Pairing(
            pairing, codes_per_hour=settings.pairing_codes_per_hour, code_length=settings.link.code_length
        )

    async def admit(self, message: InboundMessage) -> Admitted | Denied:
        """Admitted(actor) or Denied(notice) for the sender of ``message``."""
        user = message.sender
        policy = self._settings.for_platform(user.platform)
        if self.accounts.is_admin(user) or policy.allows(user.user_id):
            return Admitted(await self.accounts.person_for(user))
        if await self.pairing.is_approved(user):
            return Admitted(await self.accounts.person_for(user))
        if user.is_bot or message.chat.kind is not ChatKind.DM:
            # A code or a refusal posted in a group would be noise for everyone else there.
            return Denied(None, "not_allowed")
        if policy.pairing:
            return await self._pairing_notice(user)
        return await self._refusal(user)

    async def _pairing_notice(self, user: UserRef) -> Admitted | Denied:
        ticket = await self.pairing.request(user)
        request = ticket.request
        if request is None:
            minutes = max(1, math.ceil(ticket.retry_after_s / 60))
            text = (
                "Hi! I don't know you yet, and I can't take new pairing requests right now. "
                f"Please try again in about {minutes} minute{'s' if minutes != 1 else ''}."
            )
            return Denied(await self._once(user, "pairing_busy", text), "pairing_busy")
        if request.state is PairingState.APPROVED:
            # Approved between our check and the request: admit rather than refuse.
            return Admitted(await self.accounts.person_for(user))
        if request.state is PairingState.DENIED:
            return await self._refusal(user, reason="denied")
        text = (
            f"Hi! I don't know you yet. Your pairing code is {request.code}. Ask the operator of this bot "
            f"to approve it (mnemogate pair approve {request.code}); once they have, just write again."
        )
        return Denied(await self._once(user, f"pairing:{request.code}", text), "pairing_pending")

    async def _refusal(self, user: UserRef, reason: str = "not_allowed") -> Denied:
        if not self._settings.denied_notice:
            return Denied(None, reason)
        return Denied(await self._once(user, "not_allowed", NOT_ALLOWED), reason)

    async def _once(self, user: UserRef, kind: str, text: str) -> str | None:
        """``text`` if this account was not sent a ``kind`` notice within the notice interval."""
        fresh = await self._requests.claim_notice(
            user.platform, user.user_id, kind, interval_s=self._settings.notice_interval_s
        )
        return text if fresh else None
