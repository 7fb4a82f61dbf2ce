"""Errors of the HTTP server's configuration."""

from __future__ import annotations

from gateway.config import ConfigError


class AdminExposureError(ConfigError):
    """The admin API would listen on a non-loopback address without ``http.admin_token``."""
