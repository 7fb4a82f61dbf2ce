"""deploy/Dockerfile: checked statically, then its install steps replayed in a fresh venv (no Docker engine).

The replay copies what the build stage COPYs, runs the build stage's RUN commands with the image paths
mapped into tmp_path (the host's pip cache stands in for the BuildKit cache mount), then runs the image's
CMD and HEALTHCHECK exactly as written, with the example environment of deploy/.env.example.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from gateway.cli.main import build_parser
from gateway.queue.settings import QueueSettings

from . import dockerfile
from .settings_paths import read_env_example

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy" / "Dockerfile"
ENV_EXAMPLE = REPO / "deploy" / ".env.example"
_KEEP_OUT = ("MNEMOGATE_", "ANTHROPIC_", "OPENAI_", "VIRTUAL_ENV", "PYTHONPATH")


def _parsed() -> dockerfile.Dockerfile:
    return dockerfile.parse(DOCKERFILE)


def test_two_stages_on_a_slim_python_311_base() -> None:
    parsed = _parsed()
    assert [stage.name for stage in parsed.stages] == ["build", "runtime"]
    assert parsed.global_args["PYTHON_IMAGE"].startswith("python:3.11-slim")
    assert all(stage.base == "${PYTHON_IMAGE}" for stage in parsed.stages)
    copy = parsed.stage("runtime").all("COPY")
    assert [item.flags for item in copy] == [("--from=build",)]


def test_the_build_stage_copies_every_packaged_directory() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages = {
        pattern.rstrip("*") for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    sources = {word for item in _parsed().stage("build").all("COPY") for word in item.argument.split()[:-1]}
    assert packages <= sources
    assert {"pyproject.toml", "README.md"} <= sources
    assert all((REPO / source).exists() for source in sources)


def test_the_build_context_sends_exactly_what_the_build_stage_copies() -> None:
    ignore = (REPO / "deploy" / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    sources = {word for item in _parsed().stage("build").all("COPY") for word in item.argument.split()[:-1]}
    assert "*" in ignore and allowed == sources


def test_platform_extras_are_a_build_argument_naming_real_extras() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras = _parsed().stage("build").variables("ARG")["EXTRAS"].split(",")
    assert extras == ["telegram", "slack", "discord"]
    assert set(extras) <= set(project["project"]["optional-dependencies"])


def test_runtime_runs_as_a_non_root_user_with_the_home_on_a_volume() -> None:
    runtime = _parsed().stage("runtime")
    assert runtime.one("USER").argument not in {"root", "0"}
    assert runtime.variables("ENV")["MNEMOGATE_HOME"] == "/data"
    assert runtime.one("VOLUME").argument == '["/data"]'
    assert runtime.one("STOPSIGNAL").argument == "SIGTERM"


def test_default_command_is_serve_in_exec_form_on_all_interfaces() -> None:
    argv = _parsed().stage("runtime").one("CMD").exec_form()
    assert argv[0] == "mnemogate"
    args = build_parser().parse_args(argv[1:])
    assert (args.command, args.host, args.port) == ("serve", "0.0.0.0", 8080)


def test_healthcheck_asks_healthz_with_the_interpreter() -> None:
    check = _parsed().stage("runtime").one("HEALTHCHECK")
    argv = check.exec_form()
    assert argv[:2] == ["python", "-c"] and "/healthz" in argv[2] and "urllib" in argv[2]
    assert "--interval=30s" in check.flags


@pytest.mark.slow
def test_replayed_install_passes_check_config_serves_healthz_and_stops_on_sigterm(tmp_path: Path) -> None:
    parsed = _parsed()
    src, wheels, venv, data = (tmp_path / name for name in ("src", "wheels", "venv", "data"))
    mapping = {"/opt/venv": str(venv), "/wheels": str(wheels), "/src": str(src), "/data": str(data)}
    _replay_build_stage(parsed.stage("build"), src, mapping, tmp_path / "bin")
    assert (venv / "bin" / "mnemogate").is_file()
    data.mkdir()
    env = _runtime_env(parsed.stage("runtime"), mapping)

    check = subprocess.run(
        [str(venv / "bin" / "mnemogate"), "check-config"], env=env, cwd=data, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    assert "configuration OK" in check.stdout

    port = _free_port()
    command = [
        str(port) if word == "8080" else word for word in parsed.stage("runtime").one("CMD").exec_form()
    ]
    health = [
        word.replace(":8080/", f":{port}/") for word in parsed.stage("runtime").one("HEALTHCHECK").exec_form()
    ]
    server = subprocess.Popen(command, env=env, cwd=data, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_until_healthy(server, health, env)
        server.send_signal(signal.SIGTERM)
        grace = QueueSettings().drain_grace_s
        assert server.wait(timeout=grace + 5) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert (data / "state.db").is_file()


def _replay_build_stage(stage: dockerfile.Stage, src: Path, mapping: dict[str, str], shims: Path) -> None:
    src.mkdir()
    for item in stage.all("COPY"):
        *sources, target = item.argument.split()
        for source in sources:
            origin = REPO / source
            destination = src / target / source if target.endswith("/") else src / target
            if origin.is_dir():
                ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".mypy_cache")
                shutil.copytree(origin, destination, ignore=ignore)
            else:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, destination)
    # `python` in a RUN step is the base image's interpreter; here, this interpreter (which has pip).
    shims.mkdir()
    (shims / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (shims / "python").chmod(0o755)
    env = {key: value for key, value in os.environ.items() if not key.startswith(_KEEP_OUT)}
    env |= stage.variables("ARG") | stage.variables("ENV")
    env["PATH"] = f"{shims}:{env['PATH']}"
    for item in stage.all("RUN"):
        command = item.argument
        for image_path, local_path in mapping.items():
            command = command.replace(image_path, local_path)
        done = subprocess.run(["bash", "-ec", command], cwd=src, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


def _runtime_env(stage: dockerfile.Stage, mapping: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(_KEEP_OUT)}
    for key, value in stage.variables("ENV").items():
        for image_path, local_path in mapping.items():
            value = value.replace(image_path, local_path)
        env[key] = value.replace("$PATH", os.environ["PATH"])
    env |= {line.name: line.value for line in read_env_example(ENV_EXAMPLE) if line.active}
    return env


def _wait_until_healthy(server: subprocess.Popen[bytes], health: list[str], env: dict[str, str]) -> None:
    deadline = time.monotonic() + 60
    for _ in range(600):
        if server.poll() is not None:
            output = server.stdout.read().decode() if server.stdout else ""
            pytest.fail(f"mnemogate serve exited with {server.returncode}:\n{output[-3000:]}")
        probe = subprocess.run(health, env=env, capture_output=True, timeout=10)
        if probe.returncode == 0:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    pytest.fail("the HEALTHCHECK command never succeeded within 60 s")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
