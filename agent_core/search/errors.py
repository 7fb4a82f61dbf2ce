"""The session-search package's specific exceptions."""

from __future__ import annotations


class SearchError(Exception):
    """Base class of errors raised by agent_core.search."""


class SearchScopeError(SearchError):
    """A search was asked for without saying whose conversations it may read."""
