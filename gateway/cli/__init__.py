"""The ``mnemogate`` command line: one sub-command module per area, dispatched from ``main``."""

from gateway.cli.main import main

__all__ = ["main"]
