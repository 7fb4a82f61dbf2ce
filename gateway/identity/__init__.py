"""Persons and their platform accounts."""

from gateway.identity.person import Person

__all__ = ["Person"]
