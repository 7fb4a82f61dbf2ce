"""Skills: saved procedures as SKILL.md texts (YAML front matter + markdown body), kept in
``<home>/skills/<name>/SKILL.md`` or in the storage backend's ``SkillTexts``.

Public surface: the async ``SkillStore``, its file backend ``SkillFiles``, the ``SkillDocument`` format
with its limits and name rule, the listing types, export/import of a folder of skills, and the package's
exceptions.
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
from agent_core.skills.listing import SkillListing, SkillProblem, SkillSummary
from agent_core.skills.skill_files import SkillFiles
from agent_core.skills.store import SkillStore
from agent_core.skills.transfer import SkillImport, SkillTransfer, export_skills, import_skills

__all__ = [
    "MAX_BODY_CHARS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_NAME_CHARS",
    "InvalidSkillNameError",
    "SkillContentError",
    "SkillDocument",
    "SkillError",
    "SkillExistsError",
    "SkillFiles",
    "SkillFormatError",
    "SkillIOError",
    "SkillImport",
    "SkillListing",
    "SkillNotFoundError",
    "SkillProblem",
    "SkillStore",
    "SkillSummary",
    "SkillTransfer",
    "export_skills",
    "import_skills",
    "parse",
    "validate_name",
]
