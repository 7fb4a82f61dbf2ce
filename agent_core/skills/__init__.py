"""Skills: saved procedures in ``<home>/skills/<name>/SKILL.md`` (YAML front matter + markdown body).

Public surface: the async ``SkillStore``, the ``SkillDocument`` format with its limits and name rule,
the listing types, and the package's exceptions.
"""

from agent_core.skills.document import (
    MAX_BODY_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
    SkillDocument,
    parse,
    validate_name,
)
from agent_core.skills.errors import (
    InvalidSkillNameError,
    SkillContentError,
    SkillError,
    SkillExistsError,
    SkillFormatError,
    SkillIOError,
    SkillNotFoundError,
)
from agent_core.skills.skill_files import SkillListing, SkillProblem, SkillSummary
from agent_core.skills.store import SkillStore

__all__ = [
    "MAX_BODY_CHARS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_NAME_CHARS",
    "InvalidSkillNameError",
    "SkillContentError",
    "SkillDocument",
    "SkillError",
    "SkillExistsError",
    "SkillFormatError",
    "SkillIOError",
    "SkillListing",
    "SkillNotFoundError",
    "SkillProblem",
    "SkillStore",
    "SkillSummary",
    "parse",
    "validate_name",
]
