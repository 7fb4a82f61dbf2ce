"""Persons and their platform accounts: account -> person resolution, /link codes, DM pairing, and the
deployment's key that turns web chat cookies and API tokens into account ids."""

from gateway.identity.accounts import Accounts, LinkOutcome, account_key
from gateway.identity.client_key import ClientKey, ClientKeyError, is_web_account
from gateway.identity.codes import ALPHABET, new_code, normalise_code
from gateway.identity.errors import (
    IdentityError,
    LinkError,
    PairingAlreadyDecidedError,
    PairingError,
    UnknownPairingCodeError,
)
from gateway.identity.legacy_web_accounts import rekey_legacy_web_accounts
from gateway.identity.pairing import Pairing
from gateway.identity.settings import LinkSettings
from gateway.storage.pairing import PairingRequest, PairingState, PairingTicket

__all__ = [
    "ALPHABET",
    "Accounts",
    "ClientKey",
    "ClientKeyError",
    "IdentityError",
    "LinkError",
    "LinkOutcome",
    "LinkSettings",
    "Pairing",
    "PairingAlreadyDecidedError",
    "PairingError",
    "PairingRequest",
    "PairingState",
    "PairingTicket",
    "UnknownPairingCodeError",
    "account_key",
    "is_web_account",
    "new_code",
    "normalise_code",
    "rekey_legacy_web_accounts",
]
