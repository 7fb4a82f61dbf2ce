"""deploy/mnemogate.service: a unit systemd accepts, running a real CLI command, stopping after the drain."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.cli.main import build_parser
from gateway.config import HttpSettings
from gateway.queue.settings import QueueSettings

UNIT = Path(__file__).resolve().parents[2] / "deploy" / "mnemogate.service"
_BINARY = "/opt/mnemogate/bin/mnemogate"


def _options() -> dict[str, list[str]]:
    """``Key=value`` lines grouped by key (systemd allows repeated keys, so configparser does not fit)."""
    options: dict[str, list[str]] = {}
    for raw in UNIT.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            options.setdefault(key, []).append(value)
    return options


def test_unit_runs_serve_as_an_unprivileged_user_with_an_environment_file() -> None:
    options = _options()
    assert options["User"] == ["mnemogate"]
    assert options["EnvironmentFile"] == ["/etc/mnemogate/mnemogate.env"]
    argv = shlex.split(options["ExecStart"][0])
    assert argv[0] == _BINARY
    args = build_parser().parse_args(argv[1:])
    assert args.command == "serve"
    pre = shlex.split(options["ExecStartPre"][0])
    assert build_parser().parse_args(pre[1:]).command == "check-config"


def test_unit_restarts_on_failure_and_outlasts_the_drain() -> None:
    options = _options()
    assert options["Restart"] == ["on-failure"]
    assert options["KillSignal"] == ["SIGTERM"]
    timeout = options["TimeoutStopSec"][0]
    assert timeout.endswith("s") and float(timeout[:-1]) > QueueSettings().drain_grace_s + 10


def test_unit_opens_enough_files_for_the_connection_cap() -> None:
    # serve lowers http.max_connections to fit three quarters of the limit; the default must fit whole.
    assert int(_options()["LimitNOFILE"][0]) * 3 // 4 >= HttpSettings().max_connections


def test_unit_is_hardened() -> None:
    options = _options()
    for key in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices"):
        assert options[key][0] in {"yes", "strict", "true"}, key
    home = dict(item.split("=", 1) for item in options["Environment"])["MNEMOGATE_HOME"]
    assert home in options["ReadWritePaths"] and options["StateDirectory"] == [Path(home).name]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_every_line(tmp_path: Path) -> None:
    # verify needs the binaries to exist: point them at this environment's mnemogate.
    local = Path(sys.executable).with_name("mnemogate")
    unit = tmp_path / "mnemogate.service"
    unit.write_text(UNIT.read_text(encoding="utf-8").replace(_BINARY, str(local)), encoding="utf-8")
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    complaints = [line for line in (done.stdout + done.stderr).splitlines() if unit.name in line]
    assert complaints == []
