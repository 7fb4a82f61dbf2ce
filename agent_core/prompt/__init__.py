"""The system prompt: three tiers (stable identity/guidance/skills, project context, volatile memory/date).

Public surface: ``build_system_prompt`` over frozen ``PromptInputs`` giving a frozen ``SystemPrompt``,
``PromptSettings``, the SOUL.md default and seeding, and context-file discovery and screening.
"""

from agent_core.prompt.builder import (
    DEFAULT_TOOL_NAMES,
    PromptInputs,
    SystemPrompt,
    build_system_prompt,
    build_system_prompt_sync,
)
from agent_core.prompt.context_files import CONTEXT_FILE_NAMES, ContextFile, find_context_file, search_dirs
from agent_core.prompt.screening import ScreenedText, omission_marker, screen, truncate_middle
from agent_core.prompt.settings import PromptSettings
from agent_core.prompt.soul import DEFAULT_SOUL, ensure_soul

__all__ = [
    "CONTEXT_FILE_NAMES",
    "DEFAULT_SOUL",
    "DEFAULT_TOOL_NAMES",
    "ContextFile",
    "PromptInputs",
    "PromptSettings",
    "ScreenedText",
    "SystemPrompt",
    "build_system_prompt",
    "build_system_prompt_sync",
    "ensure_soul",
    "find_context_file",
    "omission_marker",
    "screen",
    "search_dirs",
    "truncate_middle",
]
