"""The ``schedule`` tool: the model sets, lists and cancels reminders and scheduled tasks for the person.

Invariants: who and where come from the ToolContext's actor, never from arguments (the schema has no person
or conversation): a schedule is made in the actor's conversation, for the actor, and only the actor's own
schedules are listed or cancelled; bad input comes back as an error result naming what was wrong (the same
sentences as the commands, the API and the CLI give: ``gateway.schedules.spec``).
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_core.tools import Tool, ToolContext, ToolResult

from .book import ScheduleBook
from .describe import describe_schedule, local_time
from .errors import ScheduleError
from .spec import ScheduleRequest

SCHEDULE_TOOL_NAME = "schedule"

DESCRIPTION = (
    "Set, list or cancel reminders and scheduled tasks for the person you are talking to, in this "
    "conversation. action=create with exactly one of: at (a time: 'HH:MM' — its next occurrence — "
    "'tomorrow 09:30' or 'YYYY-MM-DD HH:MM'), in (a delay: '10 minutes', '90s'), every (an interval: "
    "'1 day', '2 hours') or cron (five fields, e.g. '0 9 * * 1' for Mondays at 09:00); and exactly one of: "
    "message (text sent as it is when due — a reminder, no thinking needed) or prompt (an instruction you "
    "will carry out then, as a new turn here, e.g. 'summarise what we decided this week'). Times are in the "
    "person's time zone unless timezone (an IANA name) is given. action=list shows their open schedules; "
    "action=cancel with id cancels one. The reply to a scheduled message lands in this conversation."
)

PARAMETERS: Mapping[str, object] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["create", "list", "cancel"]},
        "at": {
            "type": "string",
            "description": "When, once: 'HH:MM', 'tomorrow 09:30' or 'YYYY-MM-DD HH:MM'.",
        },
        "in": {"type": "string", "description": "When, once, after a delay: '10 minutes', '90s', '2h30m'."},
        "every": {"type": "string", "description": "Repeat at this interval: '1 day', '2 hours'."},
        "cron": {"type": "string", "description": "Repeat on a five-field cron schedule: '0 9 * * 1'."},
        "message": {"type": "string", "description": "Text to send as it is when due (a reminder)."},
        "prompt": {"type": "string", "description": "An instruction to carry out when due, as a new turn."},
        "timezone": {"type": "string", "description": "IANA time zone; default: the person's."},
        "id": {"type": "integer", "description": "The schedule to cancel (from action=list)."},
    },
    "required": ["action"],
    "additionalProperties": False,
}


def schedule_tool(book: ScheduleBook) -> Tool:
    """The schedule tool bound to ``book``."""

    async def handle(args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        action = str(args["action"])
        try:
            if action == "create":
                return await _create(book, args, ctx)
            if action == "list":
                return await _list(book, ctx)
            return await _cancel(book, args, ctx)
        except ScheduleError as exc:
            return ToolResult.error(str(exc))

    return Tool(SCHEDULE_TOOL_NAME, DESCRIPTION, PARAMETERS, handle)


def _text(args: Mapping[str, object], name: str) -> str | None:
    value = args.get(name)
    return None if value is None else str(value)


async def _create(book: ScheduleBook, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
    request = ScheduleRequest(
        at=_text(args, "at"),
        after=_text(args, "in"),
        every=_text(args, "every"),
        cron=_text(args, "cron"),
        message=_text(args, "message"),
        prompt=_text(args, "prompt"),
        timezone=_text(args, "timezone"),
    )
    record = await book.add_for(ctx.actor, request)
    next_run = local_time(record.next_run_at, record.timezone) if record.next_run_at is not None else None
    kind = "Reminder" if record.action == "message" else "Scheduled task"
    return ToolResult.from_json(
        {
            "success": True,
            "id": record.id,
            "next_run": next_run,
            "schedule": describe_schedule(record),
            "message": f"{kind} #{record.id} set for {next_run}: {record.text}",
        }
    )


async def _list(book: ScheduleBook, ctx: ToolContext) -> ToolResult:
    schedules = await book.of_person(ctx.actor.person_id)
    lines = [describe_schedule(record) for record in schedules]
    message = "Open reminders and scheduled tasks: " + "; ".join(lines) if lines else "No open reminders."
    return ToolResult.from_json(
        {"success": True, "count": len(lines), "schedules": lines, "message": message}
    )


async def _cancel(book: ScheduleBook, args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
    schedule_id = args.get("id")
    if not isinstance(schedule_id, int):
        return ToolResult.error("Say which schedule to cancel: give its id (see action=list).")
    record = await book.cancel_for(ctx.actor.person_id, schedule_id)
    return ToolResult.from_json(
        {"success": True, "id": record.id, "message": f"Cancelled #{record.id}: {record.text}"}
    )
