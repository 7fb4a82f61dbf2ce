"""The identity package's exceptions; each carries a message fit to show the user or operator as is."""

from __future__ import annotations


class IdentityError(Exception):
    """Base of identity failures."""


class LinkError(IdentityError):
    """A /link request that cannot be honoured (unknown, expired or used code, rate limit, wrong place)."""


class PairingError(IdentityError):
    """A pairing decision that cannot be made (unknown code, request already in that state)."""


class UnknownPairingCodeError(PairingError, LookupError):
    """No pairing request has this code (or the text cannot be a code at all)."""


class PairingAlreadyDecidedError(PairingError, ValueError):
    """The request already has the requested state."""
