"""Exceptions of the tool registry; tool-level problems never raise, they become error results."""

from __future__ import annotations


class ToolError(Exception):
    """Base class of every tool registry error."""


class ToolRegistrationError(ToolError, ValueError):
    """A tool could not be registered: duplicate or invalid name, or a schema that is not JSON."""
