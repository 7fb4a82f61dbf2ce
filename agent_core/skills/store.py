"""The async skill store used by the prompt builder and the skill tools.

Invariants: no skill I/O runs on the event loop (every call goes through ``asyncio.to_thread``, whether the
texts are files or a database's rows reached over a blocking pool); every write is validated (name slug,
limits) and threat-scanned (STRICT) before the skill is locked; create and update are one exclusive
read-modify-write of the stored text (``SkillTexts.write``), and an update re-validates the merged document
against the text current under that lock, so a stored skill only ever changes into a valid one and two
writers never lose an update.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from agent_core.skills.document import SkillDocument, build, parse, validate_name
from agent_core.skills.errors import SkillExistsError, SkillNotFoundError
from agent_core.skills.listing import SkillListing, list_skills
from agent_core.skills.skill_files import SkillFiles
from agent_core.storage.documents import SkillTexts


class SkillStore:
    """Every skill of one deployment: list, view, create, update, delete."""

    def __init__(self, home: Path, *, texts: SkillTexts | None = None) -> None:
        """``texts``: the storage backend's (``Storage.skills``); by default the folder ``<home>/skills``."""
        self._texts = texts if texts is not None else SkillFiles(home / "skills")

    @property
    def texts(self) -> SkillTexts:
        """Where the skills' SKILL.md texts are kept."""
        return self._texts

    async def list(self) -> SkillListing:
        """Every loadable skill sorted by name, and the ones skipped as damaged."""
        return await asyncio.to_thread(list_skills, self._texts)

    async def view(self, name: str) -> SkillDocument:
        """The whole skill; raises SkillNotFoundError, SkillFormatError or InvalidSkillNameError."""
        return await asyncio.to_thread(self._read, validate_name(name))

    async def create(
        self, name: str, *, description: str, body: str, tags: Sequence[str] = ()
    ) -> SkillDocument:
        """Save a new skill; raises SkillExistsError, SkillContentError or InvalidSkillNameError."""
        document = build(name, description, list(tags), body)

        def only_if_absent(current: str | None) -> str:
            if current is not None:
                raise SkillExistsError(
                    f"Skill '{document.name}' already exists; use action 'update' to change it."
                )
            return document.render()

        await asyncio.to_thread(self._texts.write, document.name, only_if_absent)
        return document

    async def update(
        self,
        name: str,
        *,
        description: str | None = None,
        body: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> SkillDocument:
        """Change the given fields of an existing skill (others are kept); returns the new document."""
        validate_name(name)
        merged: list[SkillDocument] = []

        def merge(current_text: str | None) -> str:
            if current_text is None:
                raise SkillNotFoundError(f"Skill '{name}' does not exist.")
            current = parse(current_text, expected_name=name)
            document = build(
                name,
                current.description if description is None else description,
                current.tags if tags is None else list(tags),
                current.body if body is None else body,
            )
            merged.append(document)
            return document.render()

        await asyncio.to_thread(self._texts.write, name, merge)
        return merged[-1]

    async def delete(self, name: str) -> str:
        """Remove a skill (kept recoverable: ``skills/.deleted/`` or the backend's copy); where it went."""
        where = await asyncio.to_thread(self._texts.delete, validate_name(name))
        if where is None:
            raise SkillNotFoundError(f"Skill '{name}' does not exist.")
        return where

    def _read(self, name: str) -> SkillDocument:
        text = self._texts.read(name)
        if text is None:
            raise SkillNotFoundError(f"Skill '{name}' does not exist.")
        return parse(text, expected_name=name)
