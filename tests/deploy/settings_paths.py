"""Environment variables as the deploy files name them, resolved against the real ``Settings`` model.

``MNEMOGATE_<SECTION>__<KEY>[__<KEY>…]`` names a field path; a variable resolves only when every step is a
declared field (or a key of a dict section / a model that allows extra keys), so a typo in .env.example,
docker-compose.yml or the docs is caught. ``MNEMOGATE_HOME`` is read by gateway.config.home instead.
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from gateway.config import Settings
from gateway.config.home import HOME_ENV

_ASSIGNMENT = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=(.*)$")
_REFERENCE = re.compile(r"\$\{?([A-Z][A-Z0-9_]*)")
_PREFIX = "MNEMOGATE_"


@dataclass(frozen=True)
class EnvLine:
    """One ``NAME=value`` line of an env file; ``active`` is False for a commented-out example."""

    name: str
    value: str
    active: bool


def read_env_example(path: Path) -> list[EnvLine]:
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        match = _ASSIGNMENT.match(raw.strip())
        if match:
            lines.append(EnvLine(match.group(1), match.group(2), not raw.lstrip().startswith("#")))
    return lines


def referenced_variables(text: str) -> set[str]:
    """Names used as ``${NAME}`` / ``$NAME`` interpolations in a compose file or unit."""
    return set(_REFERENCE.findall(text))


def field_path(variable: str) -> tuple[str, ...] | None:
    """The Settings field path a variable sets, or None when the model would not read it."""
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        choices = getattr(alias, "choices", ())
        if variable in choices:
            return (name,)
    if not variable.startswith(_PREFIX):
        return None
    parts = tuple(part.lower() for part in variable[len(_PREFIX) :].split("__"))
    return parts if _resolves(Settings, parts) else None


def is_read(variable: str) -> bool:
    return variable == HOME_ENV or field_path(variable) is not None


def _resolves(model: type[BaseModel], parts: tuple[str, ...]) -> bool:
    head, rest = parts[0], parts[1:]
    info = model.model_fields.get(head)
    if info is None:
        return model.model_config.get("extra") == "allow"
    return _type_resolves(info.annotation, rest)


def _type_resolves(annotation: object, rest: tuple[str, ...]) -> bool:
    if not rest:
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_type_resolves(arg, rest) for arg in typing.get_args(annotation) if arg is not type(None))
    if origin is dict:
        _, value_type = typing.get_args(annotation)
        return _type_resolves(value_type, rest[1:])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _resolves(annotation, rest)
    return False


def settings_value(settings: Settings, path: tuple[str, ...]) -> object:
    """The value at ``path`` in a loaded Settings (dict sections and extra keys included)."""
    value: object = settings
    for part in path:
        if isinstance(value, dict):
            value = value[part]
        elif isinstance(value, BaseModel) and part not in type(value).model_fields:
            value = (value.model_extra or {})[part]
        else:
            value = getattr(value, part)
    return value
