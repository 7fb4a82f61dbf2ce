"""Tools the model can call: the registry, the per-call context, results, and the built-in tools.

Public surface: ``ToolRegistry`` (specs + safe ``call``/``dispatch``), ``Tool`` and ``ToolHandler``,
the frozen ``ToolContext`` and ``ToolResult``, argument checking, the memory and skill tool factories,
the built-in set, and the package's exceptions.
"""

from agent_core.tools.arguments import check_arguments
from agent_core.tools.context import ToolContext
from agent_core.tools.errors import ToolError, ToolRegistrationError
from agent_core.tools.memory_tool import MEMORY_TOOL_NAME, memory_tool
from agent_core.tools.registry import ToolRegistry
from agent_core.tools.result import DEFAULT_OUTPUT_BUDGET, ToolResult, cap_output, truncation_marker
from agent_core.tools.skill_tools import SkillWriters, skill_tools
from agent_core.tools.tool import Tool, ToolHandler
from agent_core.tools.toolset import builtin_registry, builtin_tools

__all__ = [
    "DEFAULT_OUTPUT_BUDGET",
    "MEMORY_TOOL_NAME",
    "SkillWriters",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolHandler",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolResult",
    "builtin_registry",
    "builtin_tools",
    "cap_output",
    "check_arguments",
    "memory_tool",
    "skill_tools",
    "truncation_marker",
]
