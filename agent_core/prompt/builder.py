"""Assembling the frozen system prompt of one conversation segment from its three tiers.

Invariants: tiers come in the fixed order stable → context → volatile, each built from parts that are
normalised (newlines unified, no trailing whitespace, stripped) and joined by one blank line, so the
same inputs and the same files always give byte-identical text; the caller stores the text on the
segment and reuses it for every call, so nothing here runs per model call; file I/O runs in a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from agent_core.prompt.context_files import ContextFile, load_context_file
from agent_core.prompt.guidance import (
    MEMORY_TOOL,
    SEARCH_TOOL,
    SKILL_MANAGE_TOOL,
    SKILL_VIEW_TOOL,
    runtime_notes,
    skills_index,
    tool_guidance,
)
from agent_core.prompt.screening import normalise, screen
from agent_core.prompt.settings import PromptSettings
from agent_core.prompt.soul import DEFAULT_SOUL, load_identity
from agent_core.skills import SkillSummary

DEFAULT_TOOL_NAMES = frozenset({MEMORY_TOOL, SEARCH_TOOL, "skills_list", SKILL_VIEW_TOOL, SKILL_MANAGE_TOOL})
MEMORY_HEADING = "# Remembered notes"


@dataclass(frozen=True)
class PromptInputs:
    """Everything a segment's system prompt depends on besides the files under ``home``/workspace."""

    home: Path
    settings: PromptSettings
    memory_snapshot: str
    today: date
    model: str
    platform: str
    skills: tuple[SkillSummary, ...] = ()
    tool_names: frozenset[str] = field(default=DEFAULT_TOOL_NAMES)


@dataclass(frozen=True)
class SystemPrompt:
    """The assembled prompt and its tiers (for inspection, tests and the admin API)."""

    text: str
    stable: str
    context: str | None
    volatile: str
    context_file: Path | None = None
    soul_written: bool = False
    notices: tuple[str, ...] = ()


async def build_system_prompt(inputs: PromptInputs) -> SystemPrompt:
    """Build the prompt for a new segment (reads SOUL.md and the context file off the event loop)."""
    return await asyncio.to_thread(build_system_prompt_sync, inputs)


def build_system_prompt_sync(inputs: PromptInputs) -> SystemPrompt:
    """The blocking builder, for code already in a worker thread (CLI, benchmarks)."""
    notices: list[str] = []
    identity = load_identity(inputs.home, inputs.settings.soul_file)
    soul = screen(identity.text, inputs.settings.soul_file, inputs.settings.context_char_limit)
    identity_text = soul.text
    if identity.notice is not None:
        notices.append(identity.notice)
    if soul.blocked:
        # A blocked identity would leave the model with no persona at all; keep the safe default.
        notices.append(soul.text)
        identity_text = f"{normalise(DEFAULT_SOUL)}\n\n{soul.text}"
    elif soul.omitted_chars:
        notices.append(f"[{inputs.settings.soul_file} truncated: {soul.omitted_chars:,} characters omitted.]")
    stable = _join(
        [identity_text, *tool_guidance(inputs.tool_names), skills_index(inputs.skills, inputs.tool_names)]
    )
    context_file = _context(inputs, notices)
    context = context_file.render() if context_file is not None else None
    memory = normalise(inputs.memory_snapshot)
    volatile = _join(
        [
            f"{MEMORY_HEADING}\n\n{memory}" if memory else None,
            runtime_notes(inputs.today, inputs.model, inputs.platform),
        ]
    )
    text = _join([stable, context, volatile])
    return SystemPrompt(
        text,
        stable,
        context,
        volatile,
        context_file.path if context_file is not None else None,
        identity.written,
        tuple(notices),
    )


def _context(inputs: PromptInputs, notices: list[str]) -> ContextFile | None:
    workspace = inputs.settings.workspace
    if workspace is None:
        return None
    if not workspace.is_dir():
        notices.append(f"[workspace {workspace} is not a directory; no project context loaded.]")
        return None
    loaded = load_context_file(workspace, inputs.settings.context_char_limit)
    if loaded is None:
        return None
    screened = loaded.screened
    if screened is None:
        notices.append(loaded.notice or f"[{loaded.label} could not be loaded.]")
    elif screened.blocked:
        notices.append(screened.text)
    elif screened.omitted_chars:
        notices.append(
            f"[{loaded.label} truncated: {screened.omitted_chars:,} of {screened.original_chars:,} "
            "characters omitted from the middle.]"
        )
    return loaded


def _join(parts: Iterable[str | None]) -> str:
    return "\n\n".join(clean for part in parts if part is not None and (clean := normalise(part)))
