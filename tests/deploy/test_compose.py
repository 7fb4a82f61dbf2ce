"""docker-compose.yml: valid Compose, real CLI commands, one named volume, every variable documented, and the
``postgres`` profile (the official image at a pinned major, healthy before the gateway and workers start)."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gateway.cli.main import build_parser
from gateway.config import load_settings
from gateway.queue.settings import QueueSettings

from . import dockerfile
from .settings_paths import field_path, is_read, read_env_example, referenced_variables, settings_value

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
ENV_EXAMPLE = REPO / "deploy" / ".env.example"
SCHEMA = Path(__file__).with_name("compose-spec.json")
SCHEMA_SHA256 = "56bab44c85c0ce8affb74474950293f37d510673283a243bcd7eeadb900fa35c"
MNEMOGATE_SERVICES = {"gateway": "serve", "worker": "worker", "gateway-pg": "serve", "worker-pg": "worker"}
# Read by the postgres image (its own service) and by libpq (PGPASSWORD), not by mnemogate's settings.
READ_BY_POSTGRES = {"POSTGRES_PASSWORD", "POSTGRES_USER", "POSTGRES_DB", "PGPASSWORD"}


def _compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft201909Validator.check_schema(schema)
    return jsonschema.Draft201909Validator(schema)


def _duration_s(text: str) -> float:
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text)


def test_vendored_schema_is_the_published_file() -> None:
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256


def test_compose_file_is_valid_against_the_compose_spec() -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in _validator().iter_errors(_compose())]
    assert errors == []


def test_the_schema_rejects_a_broken_compose_file() -> None:
    broken = _compose()
    broken["services"]["gateway"]["restart_policy"] = "always"
    broken["services"]["worker"]["ports"] = [{"target": "8080"}]
    assert len(list(_validator().iter_errors(broken))) >= 2


@pytest.mark.parametrize("service", sorted(MNEMOGATE_SERVICES))
def test_every_service_command_is_a_real_cli_command(service: str) -> None:
    command = _compose()["services"][service]["command"]
    argv = command if isinstance(command, list) else shlex.split(command)
    assert argv[0] == "mnemogate"
    args = build_parser().parse_args(argv[1:])
    assert args.command == MNEMOGATE_SERVICES[service]
    assert callable(args.handler)


def test_services_share_one_named_volume_for_the_home() -> None:
    compose = _compose()
    home = (
        dockerfile.parse(REPO / "deploy" / "Dockerfile").stage("runtime").variables("ENV")["MNEMOGATE_HOME"]
    )
    named = set(compose["volumes"])
    mounts = set()
    for name in MNEMOGATE_SERVICES:
        for volume in compose["services"][name]["volumes"]:
            source, target = volume.split(":")[:2]
            if target == home:
                mounts.add(source)
    assert len(mounts) == 1 and mounts <= named, (mounts, named)


def test_ports_are_loopback_only_and_only_the_gateway_publishes() -> None:
    services = _compose()["services"]
    for gateway, worker in (("gateway", "worker"), ("gateway-pg", "worker-pg")):
        assert services[gateway]["ports"] == ["127.0.0.1:8080:8080"]
        # A published port or a fixed name would stop `--scale worker=N`.
        assert "ports" not in services[worker] and "container_name" not in services[worker]
    assert "ports" not in services["postgres"]


@pytest.mark.parametrize("service", sorted(MNEMOGATE_SERVICES))
def test_restart_limits_logs_and_stop_grace(service: str) -> None:
    spec = _compose()["services"][service]
    assert spec["restart"] in {"unless-stopped", "always", "on-failure"}
    limits = spec["deploy"]["resources"]["limits"]
    assert limits["memory"] and float(limits["cpus"]) > 0
    assert spec["logging"]["driver"] == "json-file"
    assert _duration_s(spec["stop_grace_period"]) > QueueSettings().drain_grace_s + 5
    assert spec["env_file"] == ".env"


def test_every_variable_the_compose_file_uses_is_documented_and_read() -> None:
    documented = {line.name for line in read_env_example(ENV_EXAMPLE)}
    used = set().union(*(referenced_variables(text) for text in _strings(_compose())))
    for service in _compose()["services"].values():
        environment = service.get("environment", {})
        used |= set(environment if isinstance(environment, dict) else (e.split("=")[0] for e in environment))
    assert used - documented - READ_BY_POSTGRES == set()
    assert {name for name in used if not is_read(name)} - READ_BY_POSTGRES == set()
    assert "POSTGRES_PASSWORD" in documented


def test_every_variable_in_env_example_is_read_by_the_settings_model() -> None:
    unread = [line.name for line in read_env_example(ENV_EXAMPLE) if field_path(line.name) is None]
    assert set(unread) <= READ_BY_POSTGRES, unread


def test_no_example_line_carries_a_trailing_comment() -> None:
    """systemd's EnvironmentFile= and docker's env_file keep "value  # note" as the value, comment and all."""
    for raw in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        assignment = raw.lstrip("# ").strip()
        if "=" in assignment and assignment.split("=", 1)[0].isupper():
            assert "#" not in assignment.split("=", 1)[1], raw


def test_a_misspelt_variable_would_be_caught() -> None:
    assert field_path("MNEMOGATE_HTTP__ADMIN_TOKN") is None
    assert field_path("MNEMOGATE_QUEUES__CONCURRENCY") is None
    assert field_path("ANTHROPIC_KEY") is None


def test_every_example_value_reaches_its_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Set every variable of .env.example (commented ones too) and find each value where it belongs."""
    lines = [line for line in read_env_example(ENV_EXAMPLE) if line.name not in READ_BY_POSTGRES]
    for line in lines:
        monkeypatch.setenv(line.name, line.value)
    settings = load_settings(tmp_path / "absent.yaml")
    for line in lines:
        path = field_path(line.name)
        assert path is not None
        assert _normalise(settings_value(settings, path)) == _normalise(line.value), line.name


def test_the_postgres_profile_runs_the_official_image_at_a_pinned_major() -> None:
    postgres = _compose()["services"]["postgres"]
    image, _, tag = postgres["image"].partition(":")
    assert image == "postgres" and tag.split("-")[0].split(".")[0].isdigit(), postgres["image"]
    assert postgres["profiles"] == ["postgres"]
    test = postgres["healthcheck"]["test"]
    assert test[:2] == ["CMD", "pg_isready"]
    assert _duration_s(postgres["healthcheck"]["interval"]) <= 10
    source, target = postgres["volumes"][0].split(":")[:2]
    assert target == "/var/lib/postgresql/data" and source in _compose()["volumes"]
    assert postgres["environment"]["POSTGRES_PASSWORD"] == "${POSTGRES_PASSWORD:-}"


@pytest.mark.parametrize("service", ["gateway-pg", "worker-pg"])
def test_the_postgres_profile_runs_gateway_and_workers_on_it(
    service: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    compose = _compose()
    spec = compose["services"][service]
    assert spec["profiles"] == ["postgres"]
    assert spec["depends_on"]["postgres"] == {"condition": "service_healthy"}
    environment = spec["environment"]
    # The secret comes from .env; the file holds no password, only the reference.
    assert environment["PGPASSWORD"] == "${POSTGRES_PASSWORD:-}"
    assert "@" in environment["MNEMOGATE_STORAGE__POSTGRES__DSN"]
    assert ":" not in environment["MNEMOGATE_STORAGE__POSTGRES__DSN"].split("//", 1)[1].split("@")[0]
    for name, value in environment.items():
        if name.startswith("MNEMOGATE_"):
            monkeypatch.setenv(name, value)
    storage = load_settings(tmp_path / "absent.yaml").storage
    assert storage.backend == "postgres"
    dsn = storage.postgres.conninfo
    assert dsn.endswith("@postgres:5432/" + compose["services"]["postgres"]["environment"]["POSTGRES_DB"])


def test_a_plain_compose_up_still_needs_no_postgres_variable() -> None:
    """Compose interpolates every service before it applies profiles: a ``${VAR:?}`` anywhere would stop a
    plain ``docker compose up`` of the SQLite services for want of a PostgreSQL password."""
    assert ":?" not in COMPOSE.read_text(encoding="utf-8").split("services:", 1)[1]
    services = _compose()["services"]
    assert "profiles" not in services["gateway"] and "profiles" not in services["worker"]


def _strings(node: object) -> list[str]:
    """Every key and scalar of the parsed file (comments are not configuration)."""
    if isinstance(node, dict):
        return [text for key, value in node.items() for text in (str(key), *_strings(value))]
    if isinstance(node, list):
        return [text for item in node for text in _strings(item)]
    return [str(node)]


def _normalise(value: object) -> str:
    if isinstance(value, str) and value.startswith("["):
        value = json.loads(value)
    secret = getattr(value, "get_secret_value", None)
    if callable(secret):
        value = secret()
    if isinstance(value, tuple | list):
        value = ",".join(str(item) for item in value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(float(value))
    text = str(value).lower()
    try:
        return str(float(text))
    except ValueError:
        return text
