"""Home directory and typed settings; the only package that reads ``os.environ``."""

from gateway.config.errors import ConfigError, HomeError
from gateway.config.home import Home, resolve_home
from gateway.config.loader import load_settings, read_config_file
from gateway.config.settings import HttpSettings, LogSettings, Settings

__all__ = [
    "ConfigError",
    "Home",
    "HomeError",
    "HttpSettings",
    "LogSettings",
    "Settings",
    "load_settings",
    "read_config_file",
    "resolve_home",
]
