"""Persons and their platform accounts: account -> person resolution, /link codes and DM pairing."""

from agent_core.state.pairing import PairingState
from gateway.identity.accounts import Accounts, LinkOutcome, account_key
from gateway.identity.codes import ALPHABET, new_code, normalise_code
from gateway.identity.errors import (
    IdentityError,
    LinkError,
    PairingAlreadyDecidedError,
    PairingError,
    UnknownPairingCodeError,
)
from gateway.identity.pairing import Pairing, PairingRequest, PairingTicket
from gateway.identity.person import Person
from gateway.identity.settings import LinkSettings

__all__ = [
    "ALPHABET",
    "Accounts",
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
    "Person",
    "UnknownPairingCodeError",
    "account_key",
    "new_code",
    "normalise_code",
]
