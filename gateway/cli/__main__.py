"""``python -m gateway.cli`` runs the ``mnemogate`` command."""

import sys

from gateway.cli.main import main

sys.exit(main())
