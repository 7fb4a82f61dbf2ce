"""The ``storage`` section: which backend holds state, and each backend's knobs under its own name.

Invariants: ``storage.backend`` is one of ``STORAGE_BACKENDS`` (anything else is an error naming them);
the SQLite knobs live under ``storage.sqlite`` (env ``MNEMOGATE_STORAGE__SQLITE__<KEY>``) and the PostgreSQL
ones under ``storage.postgres`` (env ``MNEMOGATE_STORAGE__POSTGRES__<KEY>``; ``DATABASE_URL`` is read as the
DSN when ``storage.postgres.dsn`` is not set; ``backend: postgres`` without a DSN is an error); release 0.1's
``state.<key>`` (env ``MNEMOGATE_STATE__<KEY>``) still works as the old name of ``storage.sqlite.<key>``,
with one deprecation note per key that says what to write instead; one key set under both names is an
error naming both.
"""

from __future__ import annotations

from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from agent_core.storage.postgres.settings import PostgresSettings
from agent_core.storage.sqlite import StateSettings

StorageBackend = Literal["sqlite", "postgres"]
STORAGE_BACKENDS: tuple[str, ...] = get_args(StorageBackend)
LEGACY_SECTION = "state"


class StorageSettings(BaseModel):
    """``storage.backend`` and the settings of each backend."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: StorageBackend = "sqlite"
    sqlite: StateSettings = Field(default_factory=StateSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, value: object) -> object:
        if value not in STORAGE_BACKENDS:
            raise ValueError(
                f"{value!r} is not a storage backend; allowed values: {', '.join(STORAGE_BACKENDS)}"
            )
        return value

    def with_database_url(self, url: str | None) -> StorageSettings:
        """These settings with ``DATABASE_URL`` as the PostgreSQL DSN when none is set under its own name.

        Raises ValueError when the backend is postgres and no DSN is set either way.
        """
        chosen = self
        if url and self.postgres.dsn is None:
            postgres = self.postgres.model_copy(update={"dsn": SecretStr(url)})
            chosen = self.model_copy(update={"postgres": postgres})
        if chosen.backend == "postgres" and chosen.postgres.dsn is None:
            raise ValueError(
                "storage.backend is postgres but no DSN is set: set storage.postgres.dsn in config.yaml, "
                "MNEMOGATE_STORAGE__POSTGRES__DSN or DATABASE_URL"
            )
        return chosen


def merge_legacy_state(storage: StorageSettings, legacy: StateSettings) -> StorageSettings:
    """``storage`` with the keys set under the deprecated ``state`` section moved to ``storage.sqlite``.

    Raises ValueError naming both keys when one is set under both names (which one was meant is unknown).
    """
    moved = legacy.model_fields_set
    both = sorted(moved & storage.sqlite.model_fields_set)
    if both:
        pairs = "; ".join(f"{LEGACY_SECTION}.{key} and storage.sqlite.{key}" for key in both)
        raise ValueError(
            f"{pairs} are both set ({LEGACY_SECTION}.* is the old name of storage.sqlite.*): "
            f"keep only storage.sqlite (config.yaml) or MNEMOGATE_STORAGE__SQLITE__* (environment)"
        )
    if not moved:
        return storage
    values = {**storage.sqlite.model_dump(exclude_unset=True), **legacy.model_dump(exclude_unset=True)}
    return storage.model_copy(update={"sqlite": StateSettings.model_validate(values)})


def legacy_state_notes(legacy: StateSettings | None) -> list[str]:
    """One deprecation line per key set under ``state``, naming the key (file and environment) to use."""
    if legacy is None:
        return []
    if not legacy.model_fields_set:
        return [
            f"the {LEGACY_SECTION} section is deprecated and empty: remove it (storage.sqlite replaces it)"
        ]
    return [
        f"{LEGACY_SECTION}.{key} (MNEMOGATE_STATE__{key.upper()}) is deprecated: use storage.sqlite.{key} "
        f"(MNEMOGATE_STORAGE__SQLITE__{key.upper()}); `mnemogate check-config` shows the new section"
        for key in sorted(legacy.model_fields_set)
    ]


def migration_hint(storage: StorageSettings, legacy: StateSettings | None) -> str | None:
    """What to write instead of the ``state`` section (the whole ``storage`` section, merged), or None."""
    if legacy is None:
        return None
    if not legacy.model_fields_set:
        return f"remove the empty {LEGACY_SECTION} section from config.yaml"
    sqlite = storage.sqlite.model_dump(include=storage.sqlite.model_fields_set)
    section = yaml.safe_dump({"storage": {"backend": storage.backend, "sqlite": sqlite}}, sort_keys=False)
    return (
        f"in config.yaml, replace the {LEGACY_SECTION} section (and any storage section) with:\n"
        f"{section.rstrip()}\n"
        f"and rename environment variables MNEMOGATE_STATE__<KEY> to MNEMOGATE_STORAGE__SQLITE__<KEY>"
    )
