"""Reading config.yaml and validating it into ``Settings``, with errors that name the bad key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_settings import SettingsError

from gateway.config.errors import ConfigError
from gateway.config.settings import Settings


def read_config_file(path: Path) -> dict[str, Any]:
    """The YAML mapping in ``path``; an absent or empty file is an empty mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{where} is not valid YAML ({getattr(exc, 'problem', exc)})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, got {type(data).__name__}")
    return data


def describe_validation_error(exc: ValidationError, source: Path) -> str:
    """One line per problem, each naming the dotted key, e.g. ``memory.memory_char_limit: …``."""
    lines = []
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"]) or "(top level)"
        lines.append(f"{key}: {err['msg']}")
    return f"invalid configuration ({source} and environment):\n  " + "\n  ".join(lines)


def load_settings(config_file: Path) -> Settings:
    """Validate config.yaml plus environment overrides; raise ConfigError naming every bad key."""
    data = read_config_file(config_file)
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, config_file)) from exc
    except SettingsError as exc:
        # An environment override pydantic-settings could not decode (e.g. a list that is not JSON).
        raise ConfigError(
            f'invalid environment override: {exc}; lists must be JSON, e.g. \'["a", "b"]\''
        ) from exc
