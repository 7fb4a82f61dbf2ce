"""Re-keying a home written by earlier versions, whose web chat accounts were the browsers' raw cookies.

Invariants: it runs when the gateway starts, before the web chat serves a request; in ONE write
transaction every raw cookie the store keeps — as an account id, in session keys, chat references, event ids
and the keys derived from them — becomes the cookie's keyed hash (``ClientKey.web_account``), so the
browser still holding that cookie reaches the same person and conversation while the store no longer
contains the cookie; ids already hashed are left alone, so running it again changes nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from gateway.identity.client_key import ClientKey, is_web_account
from gateway.sessions import KeyScope, SessionKey
from gateway.storage.identity import IdentityRepository

_LOG = logging.getLogger("mnemogate.identity")
# What earlier versions accepted as a cookie (and so stored as the account id).
_LEGACY_COOKIE = re.compile(r"[A-Za-z0-9_-]{16,64}")


async def rekey_legacy_web_accounts(
    identity: IdentityRepository, key: ClientKey, platform: str = "web"
) -> int:
    """Replace raw cookies by their keyed hashes everywhere the store keeps them; how many were re-keyed."""

    def forms(account_id: str) -> Mapping[str, str]:
        if not _is_legacy(account_id):
            return {}
        new = key.web_account(account_id)
        return {account_id: new, _in_session_key(platform, account_id): _in_session_key(platform, new)}

    # Every start after the first finds nothing: look on a reader, and take the write lock only for work.
    if not any(_is_legacy(account) for account in await identity.platform_account_ids(platform)):
        return 0
    count = await identity.rekey_accounts(platform, forms)
    if count:
        _LOG.info("web chat: %d account(s) keyed by a raw cookie now keyed by its hash", count)
    return count


def _is_legacy(account_id: str) -> bool:
    return not is_web_account(account_id) and _LEGACY_COOKIE.fullmatch(account_id) is not None


def _in_session_key(platform: str, chat_id: str) -> str:
    """``chat_id`` as it appears inside a session key (percent-escaped)."""
    return SessionKey(platform=platform, scope=KeyScope.DM, chat_id=chat_id).to_string().split(":")[3]
