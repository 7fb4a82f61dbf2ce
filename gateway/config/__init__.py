"""Home directory and typed settings; the only package that reads ``os.environ``."""

from gateway.config.errors import ConfigError, HomeError
from gateway.config.home import Home, resolve_home
from gateway.config.loader import load_settings, read_config_file
from gateway.config.settings import AdminSettings, HttpSettings, LogSettings, Settings
from gateway.config.storage import STORAGE_BACKENDS, StorageSettings

__all__ = [
    "STORAGE_BACKENDS",
    "AdminSettings",
    "ConfigError",
    "Home",
    "HomeError",
    "HttpSettings",
    "LogSettings",
    "Settings",
    "StorageSettings",
    "load_settings",
    "read_config_file",
    "resolve_home",
]
