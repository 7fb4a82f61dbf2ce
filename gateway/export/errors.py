"""Why an export could not be made; each message is one line fit for the CLI and a problem document."""

from __future__ import annotations


class ExportError(Exception):
    """An export could not be made; nothing was written under the archive's name."""


class UnknownPersonError(ExportError):
    """No person row and no conversation names this person id."""


class ExportTargetError(ExportError):
    """The archive cannot be written where it was asked to go (exists, is a directory, not writable)."""
