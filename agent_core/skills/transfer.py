"""Skills as plain files outside the home: export every skill, and import a folder of them.

Invariants: export writes each loadable skill's stored text at ``DIR/<name>/SKILL.md`` (the file backend's
layout), atomically, files 0600 and folders 0700, whatever backend holds them; damaged skills are reported,
never exported half-read. Import takes ``DIR/<name>/SKILL.md`` for every visible folder and passes it through
exactly what a write passes (front matter, name slug, limits, STRICT threat scan) before storing it with the
backend's exclusive read-modify-write; a skill equal to the stored one is left alone, so importing twice
changes nothing; skills missing from the folder are kept; nothing raises for one bad file.
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass
from pathlib import Path

from agent_core.skills.document import build, parse, validate_name
from agent_core.skills.errors import SkillError
from agent_core.skills.skill_files import SKILL_FILE, read_skill_file, write_skill_file
from agent_core.storage.documents import SkillTexts


class SkillImport(enum.StrEnum):
    """What importing one skill did."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    REFUSED = "refused"


@dataclass(frozen=True)
class SkillTransfer:
    """One skill of an export or import: its name, what happened and why (for a refusal or a skip)."""

    name: str
    path: Path
    outcome: str
    reason: str | None = None


def export_skills(texts: SkillTexts, directory: Path) -> tuple[SkillTransfer, ...]:
    """Write every loadable skill under ``directory``; damaged ones come back ``skipped`` with the reason."""
    done: list[SkillTransfer] = []
    for name in texts.names():
        path = directory / name / SKILL_FILE
        try:
            text = texts.read(validate_name(name))
            if text is None:
                continue
            parse(text, expected_name=name)
        except SkillError as exc:
            done.append(SkillTransfer(name, path, "skipped", str(exc)))
            continue
        write_skill_file(path, text)
        done.append(SkillTransfer(name, path, "exported"))
    return tuple(done)


def import_skills(texts: SkillTexts, directory: Path) -> tuple[SkillTransfer, ...]:
    """Create or update every skill found under ``directory``; one result per folder, sorted by name."""
    if not directory.is_dir():
        raise NotADirectoryError(f"{directory} is not a directory")
    folders = sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    return tuple(_import_one(texts, folder) for folder in folders)


def _import_one(texts: SkillTexts, folder: Path) -> SkillTransfer:
    path = folder / SKILL_FILE
    try:
        if path.is_symlink():
            raise SkillError("SKILL.md is a symlink (symlinks are not followed)")
        text = read_skill_file(path)
        if text is None:
            raise SkillError("the folder holds no SKILL.md")
        found = parse(text, expected_name=validate_name(folder.name))
        document = build(found.name, found.description, list(found.tags), found.body)
    except SkillError as exc:
        return SkillTransfer(folder.name, path, SkillImport.REFUSED, str(exc))
    outcome: list[SkillImport] = []

    def store(current: str | None) -> str | None:
        if current is None:
            outcome.append(SkillImport.CREATED)
            return document.render()
        with contextlib.suppress(SkillError):
            if parse(current, expected_name=document.name) == document:
                outcome.append(SkillImport.UNCHANGED)
                return None
        outcome.append(SkillImport.UPDATED)
        return document.render()

    texts.write(document.name, store)
    return SkillTransfer(document.name, path, outcome[-1])
