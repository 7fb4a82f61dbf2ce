"""The async skill store used by the prompt builder and the skill tools.

Invariants: no file I/O runs on the event loop (every call goes through ``asyncio.to_thread``); every
write is validated (name slug, limits) and threat-scanned (STRICT) before the file lock is taken; an
update re-validates the merged document, so a skill on disk only ever changes into a valid one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from agent_core.skills.document import SkillDocument, build, validate_name
from agent_core.skills.skill_files import SkillFiles, SkillListing


class SkillStore:
    """Skills under ``<home>/skills``: list, view, create, update, delete."""

    def __init__(self, home: Path) -> None:
        self._files = SkillFiles(home / "skills")

    @property
    def root(self) -> Path:
        """The skills folder."""
        return self._files.root

    async def list(self) -> SkillListing:
        """Every loadable skill sorted by name, and the folders skipped as damaged."""
        return await asyncio.to_thread(self._files.scan)

    async def view(self, name: str) -> SkillDocument:
        """The whole skill; raises SkillNotFoundError, SkillFormatError or InvalidSkillNameError."""
        return await asyncio.to_thread(self._files.read, validate_name(name))

    async def create(
        self, name: str, *, description: str, body: str, tags: Sequence[str] = ()
    ) -> SkillDocument:
        """Save a new skill; raises SkillExistsError, SkillContentError or InvalidSkillNameError."""
        document = build(name, description, list(tags), body)
        await asyncio.to_thread(self._files.create, document)
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

        def merge_and_write() -> SkillDocument:
            current = self._files.read(name)
            document = build(
                name,
                current.description if description is None else description,
                current.tags if tags is None else list(tags),
                current.body if body is None else body,
            )
            self._files.replace(name, document)
            return document

        return await asyncio.to_thread(merge_and_write)

    async def delete(self, name: str) -> Path:
        """Remove a skill (moved to ``skills/.deleted/`` for recovery); returns where it went."""
        return await asyncio.to_thread(self._files.delete, validate_name(name))
