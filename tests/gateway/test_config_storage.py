"""The ``storage`` section: ``storage.backend`` and ``storage.sqlite.*``; release 0.1's ``state.*`` keys (file
and environment) keep working with a warning naming the new key, one key under both names is an error naming
both, an unknown backend is an error naming the allowed ones, and check-config says what to write instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gateway.config import ConfigError, load_settings
from gateway.startup_notes import startup_notes


def _write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_storage_section_holds_the_backend_and_the_sqlite_knobs(home: Path) -> None:
    config = "storage:\n  backend: sqlite\n  sqlite:\n    index_enabled: false\n    integrity_check_s: 0\n"
    settings = load_settings(_write(home, config))
    assert settings.storage.backend == "sqlite"
    assert settings.storage.sqlite.index_enabled is False
    assert settings.storage.sqlite.integrity_check_s == 0
    assert settings.deprecations() == [] and settings.migration_hint() is None
    assert not [note for note in startup_notes(settings) if "deprecated" in note.text]


def test_the_defaults_are_sqlite_with_its_documented_knobs(home: Path) -> None:
    settings = load_settings(home / "config.yaml")
    assert settings.storage.backend == "sqlite"
    assert settings.storage.sqlite.db_filename == "state.db"
    assert settings.deprecations() == []


def test_the_new_keys_are_read_from_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOGATE_STORAGE__SQLITE__DB_FILENAME", "other.db")
    monkeypatch.setenv("MNEMOGATE_STORAGE__BACKEND", "sqlite")
    settings = load_settings(home / "config.yaml")
    assert settings.storage.sqlite.db_filename == "other.db"
    assert settings.deprecations() == []


def test_an_old_state_key_in_the_file_still_works_and_warns_naming_the_new_key(home: Path) -> None:
    settings = load_settings(_write(home, "state:\n  trigram_scope: all\n"))
    assert settings.storage.sqlite.trigram_scope == "all"
    (line,) = settings.deprecations()
    assert "state.trigram_scope" in line and "use storage.sqlite.trigram_scope" in line
    assert "MNEMOGATE_STORAGE__SQLITE__TRIGRAM_SCOPE" in line
    warnings = [note.text for note in startup_notes(settings) if note.warning]
    assert line in warnings  # serve logs it once at start; check-config prints it


def test_an_old_state_variable_still_works_and_warns(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOGATE_STATE__INTEGRITY_CHECK_S", "0")
    settings = load_settings(home / "config.yaml")
    assert settings.storage.sqlite.integrity_check_s == 0
    (line,) = settings.deprecations()
    assert "MNEMOGATE_STATE__INTEGRITY_CHECK_S" in line and "storage.sqlite.integrity_check_s" in line


def test_different_keys_under_the_old_and_new_names_combine(home: Path) -> None:
    config = "state:\n  index_enabled: false\nstorage:\n  sqlite:\n    db_filename: other.db\n"
    settings = load_settings(_write(home, config))
    assert settings.storage.sqlite.index_enabled is False
    assert settings.storage.sqlite.db_filename == "other.db"
    assert len(settings.deprecations()) == 1


def test_one_key_under_both_names_is_an_error_naming_both(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOGATE_STORAGE__SQLITE__INDEX_ENABLED", "true")
    with pytest.raises(
        ConfigError, match=r"state\.index_enabled and storage\.sqlite\.index_enabled are both set"
    ):
        load_settings(_write(home, "state:\n  index_enabled: false\n"))


def test_an_unknown_backend_is_an_error_naming_the_allowed_values(home: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"storage\.backend: .*'mysql' is not a storage backend.*: sqlite, postgres"
    ):
        load_settings(_write(home, "storage:\n  backend: mysql\n"))


def test_postgres_without_a_dsn_is_an_error_naming_every_place_to_set_one(home: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"postgres but no DSN.*storage\.postgres\.dsn.*POSTGRES__DSN or DATABASE_URL"
    ):
        load_settings(_write(home, "storage:\n  backend: postgres\n"))


def test_database_url_is_the_dsn_unless_the_storage_variable_names_one(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://app:pw@db.internal/mnemo")
    settings = load_settings(_write(home, "storage:\n  backend: postgres\n"))
    assert settings.storage.postgres.conninfo == "postgresql://app:pw@db.internal/mnemo"
    assert "postgresql://app:pw@db.internal/mnemo" in settings.secret_values()
    monkeypatch.setenv("MNEMOGATE_STORAGE__POSTGRES__DSN", "postgresql://other@db2/mnemo")
    settings = load_settings(_write(home, "storage:\n  backend: postgres\n"))
    assert settings.storage.postgres.conninfo == "postgresql://other@db2/mnemo"


def test_a_postgres_schema_name_must_be_plain(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"storage\.postgres\.schema.*not a plain schema name"):
        load_settings(_write(home, 'storage:\n  postgres:\n    schema: "a; drop"\n'))


def test_an_unknown_sqlite_knob_is_reported_under_its_new_name(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"storage\.sqlite\.index_enabeld: Extra inputs are not permitted"):
        load_settings(_write(home, "storage:\n  sqlite:\n    index_enabeld: false\n"))


def test_the_migration_hint_is_a_storage_section_that_loads_to_the_same_settings(home: Path) -> None:
    old = load_settings(_write(home, "state:\n  index_enabled: false\n  db_filename: kept.db\n"))
    hint = old.migration_hint()
    assert hint is not None
    section = hint.split(":\n", 1)[1].rsplit("\nand rename", 1)[0]
    assert yaml.safe_load(section)["storage"]["sqlite"] == {"db_filename": "kept.db", "index_enabled": False}
    new = load_settings(_write(home, section))
    assert new.storage == old.storage and new.deprecations() == []


def test_check_config_prints_the_warning_and_what_to_write_instead(home: Path) -> None:
    _write(home, "state:\n  index_enabled: false\n")
    result = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "check-config", "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "warning: state.index_enabled (MNEMOGATE_STATE__INDEX_ENABLED) is deprecated" in result.stdout
    assert "replace the state section (and any storage section) with:\nstorage:\n  backend: sqlite\n" in (
        result.stdout
    )
    assert "    index_enabled: false\n" in result.stdout
