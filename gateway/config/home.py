"""The home directory: where config.yaml, state.db, memories/ and skills/ live.

Resolved once per CLI invocation: ``--home DIR`` wins over ``MNEMOGATE_HOME``, which wins over
``~/.mnemogate``. Only this package reads ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gateway.config.errors import HomeError

HOME_ENV = "MNEMOGATE_HOME"
DEFAULT_HOME = Path("~/.mnemogate")


@dataclass(frozen=True)
class Home:
    """Paths inside one home directory."""

    root: Path

    @property
    def config_file(self) -> Path:
        return self.root / "config.yaml"

    @property
    def state_db(self) -> Path:
        return self.root / "state.db"

    @property
    def memories(self) -> Path:
        return self.root / "memories"

    @property
    def skills(self) -> Path:
        return self.root / "skills"

    def ensure(self) -> Home:
        """Create the directory (mode 0700) if missing; raise HomeError when it cannot be used."""
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise HomeError(f"home directory {self.root}: cannot create it ({exc.strerror})") from exc
        if not self.root.is_dir():
            raise HomeError(f"home directory {self.root}: exists but is not a directory")
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise HomeError(f"home directory {self.root}: not writable by this user")
        return self


def resolve_home(cli_value: str | None, environ: Mapping[str, str] | None = None) -> Home:
    """The home named by ``--home``, else ``$MNEMOGATE_HOME``, else ``~/.mnemogate`` (not created)."""
    env = os.environ if environ is None else environ
    raw = cli_value or env.get(HOME_ENV) or str(DEFAULT_HOME)
    return Home(Path(raw).expanduser().resolve())
