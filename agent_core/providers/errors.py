"""The exceptions of the memory-provider layer: configuration, availability and call failures."""

from __future__ import annotations


class ProviderError(Exception):
    """Base class of every memory-provider error."""


class ProviderConfigError(ProviderError):
    """The provider configuration is contradictory (for example two external providers at once)."""


class ProviderUnavailableError(ProviderError):
    """A configured provider cannot run here: its API key or its package is missing.

    Raised at start-up so an operator sees it, never swallowed into a silently memory-less bot.
    """


class ProviderCallError(ProviderError):
    """A provider call failed, timed out or was refused because the circuit is open."""


class CircuitOpenError(ProviderCallError):
    """The call was not attempted: the provider failed repeatedly and is cooling down."""
