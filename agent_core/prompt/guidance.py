"""The fixed texts of the prompt: tool and memory guidance, the skills index, date and platform notes.

Invariants: every text here is a pure function of its arguments (no clock, no locale, no environment),
so the same inputs always give the same bytes; skill descriptions are scanned (CONTEXT scope) and a
blocked one is replaced by a notice, because the index enters every prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from types import MappingProxyType

from agent_core.skills import SkillSummary
from agent_core.threats import Scope, scan

MEMORY_TOOL = "memory"
SEARCH_TOOL = "session_search"
SKILL_VIEW_TOOL = "skill_view"
SKILL_MANAGE_TOOL = "skill_manage"
INDEX_DESCRIPTION_CHARS = 120

TOOLS_HEADING = "# Your tools"
MEMORY_GUIDANCE = """\
## Memory
You have a persistent memory (the `memory` tool) that lasts across conversations. The notes \
under "Remembered notes" below were frozen when this conversation segment started: writes are saved \
at once but show up there only in a later segment, so use memory(action="read") for the live state.
- `user` is who this person is: name, preferences, how they like answers, stable personal details. \
`memory` is your own notes about your shared work and environment. `global` is agent-wide notes for \
everyone and can be changed only in an admin's conversation.
- Save without being asked when someone states a preference, corrects you, or shares a durable fact; \
a good note spares them from repeating themselves.
- Write declarative facts, not instructions: ✓ "Prefers metric units." ✗ "Always use metric units." \
Instructions read back later look like orders given out of context.
- Do not save task progress, to-do lists, logs, commit hashes or anything stale within a week, nor \
what is easy to look up again. Reusable procedures belong in skills, not memory.
- Memory has a fixed size. Keep entries short; when it is full, send one batched call (operations) \
that merges or removes entries and adds the new one."""

SEARCH_GUIDANCE = """\
## Past conversations
Earlier conversations are searchable with session_search. When someone refers to something you \
discussed before, search before saying you do not remember."""

SKILLS_GUIDANCE = """\
## Skills
Skills are saved procedures. If one in the index below fits the task, load it with \
skill_view(name) before you start and follow it."""

SKILLS_MANAGE_GUIDANCE = """\
After working out a non-trivial procedure that will be needed again, save it with \
skill_manage(action="create"); fix a skill that turned out wrong with action "update"."""

PLATFORM_HINTS: Mapping[str, str] = MappingProxyType(
    {
        "telegram": "Telegram: plain Markdown (bold, italics, code, links) renders; keep messages short.",
        "slack": "Slack: Markdown is converted to Slack formatting; avoid tables and HTML.",
        "discord": "Discord: Markdown renders; messages over 2,000 characters are split.",
        "web": "Web chat: Markdown renders, including code blocks and tables.",
        "cli": "Command line: plain text reads best; Markdown is shown as typed.",
    }
)
SESSION_HEADING = "# This session"
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def tool_guidance(tool_names: Iterable[str]) -> tuple[str, ...]:
    """The guidance sections for the tools on offer, in a fixed order."""
    names = frozenset(tool_names)
    sections: list[str] = [TOOLS_HEADING] if names & {MEMORY_TOOL, SEARCH_TOOL, SKILL_VIEW_TOOL} else []
    if MEMORY_TOOL in names:
        sections.append(MEMORY_GUIDANCE)
    if SEARCH_TOOL in names:
        sections.append(SEARCH_GUIDANCE)
    return tuple(sections)


def skills_index(skills: Iterable[SkillSummary], tool_names: Iterable[str]) -> str | None:
    """The skills section (guidance + one line per skill, sorted by name), or None without skill tools."""
    names = frozenset(tool_names)
    if SKILL_VIEW_TOOL not in names:
        return None
    parts = [SKILLS_GUIDANCE]
    if SKILL_MANAGE_TOOL in names:
        parts.append(SKILLS_MANAGE_GUIDANCE)
    unique = {s.name: s for s in skills}
    lines = [f"- {name}: {index_description(unique[name])}" for name in sorted(unique)]
    parts.append("\n".join(["Available skills:", *lines]) if lines else "No skills are saved yet.")
    return "\n\n".join(parts)


def index_description(skill: SkillSummary) -> str:
    """One short line for the index; a description matching a threat pattern is not shown."""
    findings = scan(skill.description, Scope.CONTEXT)
    if findings:
        ids = ", ".join(f.pattern_id for f in findings)
        return f"[description hidden: matches threat pattern(s) {ids}]"
    line = " ".join(skill.description.split())
    if len(line) > INDEX_DESCRIPTION_CHARS:
        line = line[: INDEX_DESCRIPTION_CHARS - 1].rstrip() + "…"
    return line


def date_line(today: date) -> str:
    """The date only (no time), so the prompt stays byte-identical all day and across restarts."""
    return f"Conversation started on {_WEEKDAYS[today.weekday()]}, {today.isoformat()}."


def runtime_notes(today: date, model: str, platform: str) -> str:
    """The session section: date, model and platform, plus the platform's formatting hint if known."""
    lines = [SESSION_HEADING, "", date_line(today), f"Model: {model}", f"Platform: {platform}"]
    hint = PLATFORM_HINTS.get(platform.lower())
    if hint is not None:
        lines.append(hint)
    return "\n".join(lines)
