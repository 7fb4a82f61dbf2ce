"""What a skill listing holds, and building one from any ``SkillTexts``: every loadable skill sorted by name.

Invariant: a damaged or misnamed skill becomes a ``SkillProblem`` and never stops the others from loading.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.skills.document import parse, validate_name
from agent_core.skills.errors import InvalidSkillNameError, SkillFormatError, SkillIOError
from agent_core.storage.documents import SkillTexts


@dataclass(frozen=True)
class SkillSummary:
    """What the index and ``skills_list`` show of one skill."""

    name: str
    description: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class SkillProblem:
    """A skill that could not be loaded, and why (for logs, health and the admin)."""

    name: str
    message: str


@dataclass(frozen=True)
class SkillListing:
    """Every loadable skill sorted by name, plus the ones that were skipped."""

    skills: tuple[SkillSummary, ...]
    problems: tuple[SkillProblem, ...]

    def names(self) -> tuple[str, ...]:
        """The skill names in order."""
        return tuple(s.name for s in self.skills)


def list_skills(texts: SkillTexts) -> SkillListing:
    """Every stored skill, parsed; damaged ones become problems."""
    skills: list[SkillSummary] = []
    problems: list[SkillProblem] = []
    for name in texts.names():
        try:
            text = texts.read(validate_name(name))
            if text is None:
                continue
            doc = parse(text, expected_name=name)
        except (SkillFormatError, SkillIOError, InvalidSkillNameError) as exc:
            problems.append(SkillProblem(name, str(exc)))
            continue
        skills.append(SkillSummary(doc.name, doc.description, doc.tags))
    return SkillListing(tuple(skills), tuple(problems))
