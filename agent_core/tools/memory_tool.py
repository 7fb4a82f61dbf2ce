"""The ``memory`` tool: read and curate the calling person's MEMORY.md / USER.md and the global notes.

Invariants: every write goes through ``MemoryStores`` as ``ctx.actor`` with the turn's breaker, so the
stores addressed are always that actor's (the schema has no person argument, so a model cannot name anyone
else), global writes are refused unless the actor is an admin, the audit records the actor, and results
carry the exact wording and shapes of the memory package; ``read`` returns the live entries and usage.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_core.memory import BatchOperation, MemoryResult, MemoryStores
from agent_core.tools.context import ToolContext
from agent_core.tools.result import ToolResult
from agent_core.tools.tool import Tool

MEMORY_TOOL_NAME = "memory"

DESCRIPTION = (
    "Save, change or read durable notes that persist across conversations. Targets: 'user' = who this "
    "person is (name, preferences, how they like answers, stable personal details); 'memory' = your own "
    "notes (environment facts, conventions, lessons learned); 'global' = agent-wide notes shared with "
    "everyone, writable only in an admin's conversation. Save proactively when the person states a "
    "preference, corrects you or shares a lasting fact (priority: their preferences, then environment, "
    "then procedures). Write short declarative facts, not instructions. Do not save trivia, things easy "
    "to look up again, dumps, task progress, logs or TODOs (past conversations are searchable with "
    "session_search); procedures belong in skills. Prefer ONE call with 'operations' that frees room and "
    "adds in a single atomic step: the size limit is checked on the final state. When a write says memory "
    "is full, reissue it as one batch that merges or removes entries. 'read' shows the live entries and "
    "usage of one target (the prompt's notes are a snapshot from the start of the conversation)."
)

PARAMETERS: Mapping[str, object] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": ["add", "replace", "remove", "read"],
            "description": "What to do; omit when sending 'operations'.",
        },
        "target": {
            "type": "string",
            "enum": ["memory", "user", "global"],
            "description": "Which store: 'user', 'memory', or 'global' (admin conversations only).",
        },
        "content": {"type": "string", "description": "The entry for 'add', or the new text for 'replace'."},
        "old_text": {
            "type": "string",
            "description": "For 'replace'/'remove': a short substring found in exactly one entry.",
        },
        "operations": {
            "type": "array",
            "description": "An all-or-nothing batch on one target, applied in order.",
            "items": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                    "content": {"type": "string"},
                    "old_text": {"type": "string"},
                },
                "required": ["action"],
            },
        },
    },
    "required": ["target"],
}


def memory_tool(stores: MemoryStores) -> Tool:
    """The memory tool bound to ``stores``."""

    async def handle(args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        target = str(args["target"])
        action = args.get("action")
        operations = args.get("operations")
        actor, breaker = ctx.actor, ctx.breaker
        if isinstance(operations, list | tuple) and (operations or action is None):
            ops = tuple(_operation(op) for op in operations)
            return _result(await stores.batch(actor, target=target, operations=ops, breaker=breaker))
        if action is None:
            return ToolResult.error("Give an action ('add', 'replace', 'remove' or 'read') or 'operations'.")
        if action == "read":
            view = await stores.entries(person_id=actor.person_id, target=target)
            return ToolResult.from_json(view.to_dict())
        content, old_text = _text(args.get("content")), _text(args.get("old_text"))
        if action == "add":
            if not content:
                return ToolResult.error("Content is required for 'add' action.")
            return _result(await stores.add(actor, target=target, content=content, breaker=breaker))
        if not old_text:
            return await _missing_old_text(stores, ctx, target, str(action))
        if action == "replace":
            if not content:
                return ToolResult.error("content is required for 'replace' action.")
            return _result(
                await stores.replace(
                    actor, target=target, old_text=old_text, content=content, breaker=breaker
                )
            )
        return _result(await stores.remove(actor, target=target, old_text=old_text, breaker=breaker))

    return Tool(MEMORY_TOOL_NAME, DESCRIPTION, PARAMETERS, handle)


async def _missing_old_text(stores: MemoryStores, ctx: ToolContext, target: str, action: str) -> ToolResult:
    """Recoverable: show the entries so the model can pick a unique substring and retry."""
    view = (await stores.entries(person_id=ctx.actor.person_id, target=target)).to_dict()
    return ToolResult.error(
        f"old_text is required for '{action}' action. Reissue the call with old_text set to a short "
        "substring that appears in exactly one of current_entries.",
        current_entries=view["entries"],
        usage=view["usage"],
    )


def _operation(raw: object) -> BatchOperation:
    if not isinstance(raw, Mapping):
        # The registry's schema check guarantees objects; reaching here means it was bypassed.
        raise TypeError("operations must be a list of {action, content?, old_text?} objects")
    return BatchOperation.from_mapping(raw)


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _result(result: MemoryResult) -> ToolResult:
    return ToolResult.from_json(result.to_dict(), is_error=not result.success)
