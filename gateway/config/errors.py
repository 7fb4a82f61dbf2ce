"""Configuration errors: each carries one line a person can act on, naming the bad key or file."""

from __future__ import annotations


class ConfigError(Exception):
    """The configuration cannot be used; ``str(err)`` names the file or key and what is wrong."""


class HomeError(ConfigError):
    """The home directory is unusable (not a directory, not writable)."""
