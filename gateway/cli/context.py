"""What every command receives: the resolved home, and settings loaded once on first use."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from gateway.config import Home, Settings, load_settings, resolve_home

# The person who owns memory for console commands (`mnemogate chat`, `mnemogate memory`).
LOCAL_PERSON_ID = "local"


@dataclass
class CommandContext:
    """Per-invocation context; settings are read once, lazily, so ``--help`` needs no valid config."""

    home: Home
    args: argparse.Namespace
    _settings: Settings | None = field(default=None, repr=False)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CommandContext:
        return cls(home=resolve_home(getattr(args, "home", None)), args=args)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.home.config_file)
        return self._settings
