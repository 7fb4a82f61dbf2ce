"""Exceptions raised by the skill store; each message is written to be shown to the model as is."""

from __future__ import annotations


class SkillError(Exception):
    """Base class of every skill store error."""


class InvalidSkillNameError(SkillError, ValueError):
    """A skill name that is not a lowercase slug (and so could name a path outside the skills folder)."""


class SkillNotFoundError(SkillError, LookupError):
    """No skill of that name exists."""


class SkillExistsError(SkillError):
    """A create named a skill that already exists."""


class SkillContentError(SkillError, ValueError):
    """A write was refused: a field is missing, too long, malformed, or matches a threat pattern."""


class SkillFormatError(SkillError, ValueError):
    """A SKILL.md on disk has no readable front matter; the skill is skipped, never half-loaded."""


class SkillIOError(SkillError):
    """The OS refused to read or write a skill file; the previous file, if any, is intact."""
