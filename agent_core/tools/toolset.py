"""The built-in tool set of the agent, assembled from the services that are configured.

Invariant: a tool is offered only when its service exists, so the model is never shown a tool that
could only fail; tools owned elsewhere (session_search) are added with ``ToolRegistry.register``.
"""

from __future__ import annotations

from agent_core.memory import MemoryStores
from agent_core.skills import SkillStore
from agent_core.tools.memory_tool import memory_tool
from agent_core.tools.registry import ToolRegistry
from agent_core.tools.result import DEFAULT_OUTPUT_BUDGET
from agent_core.tools.skill_tools import SkillWriters, skill_tools
from agent_core.tools.tool import Tool


def builtin_tools(
    *, memory: MemoryStores | None, skills: SkillStore | None, skill_writers: SkillWriters = "admins"
) -> tuple[Tool, ...]:
    """The memory tool and the skill tools for the services given."""
    tools: list[Tool] = []
    if memory is not None:
        tools.append(memory_tool(memory))
    if skills is not None:
        tools.extend(skill_tools(skills, writers=skill_writers))
    return tuple(tools)


def builtin_registry(
    *,
    memory: MemoryStores | None,
    skills: SkillStore | None,
    skill_writers: SkillWriters = "admins",
    output_budget: int = DEFAULT_OUTPUT_BUDGET,
) -> ToolRegistry:
    """A registry holding the built-in tools (register more on it afterwards)."""
    tools = builtin_tools(memory=memory, skills=skills, skill_writers=skill_writers)
    return ToolRegistry(tools, output_budget=output_budget)
