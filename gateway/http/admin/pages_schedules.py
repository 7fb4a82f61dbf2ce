"""The console's schedules: every reminder and scheduled turn with its state, one schedule with its runs (task
status apart from delivery status), and forms to add one to a conversation, cancel one, or re-send a run's
given-up delivery — the same ``ScheduleBook`` rules as the tool, the commands, the API and the CLI."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from gateway.schedules import ScheduleBook, ScheduleError, ScheduleRequest, describe_schedule, local_time
from gateway.storage.schedules import SCHEDULE_STATES, ScheduleRecord

from .guards import CheckedForm, ConsoleForm, SignedIn
from .pages_support import Console, see_other
from .rendering import PAGE_SIZE, Pager, page_offset

CONSOLE_SCHEDULER = "admin:console"
_WHEN = ("at", "in", "every", "cron")
_RUNS_SHOWN = 50


def schedule_routes(router: APIRouter, console: Console) -> None:
    def book() -> ScheduleBook:
        if console.backend.schedules is None:
            raise HTTPException(503, "Schedules are not available on this gateway.")
        return console.backend.schedules

    @router.get("/ui/schedules", include_in_schema=False)
    async def schedules(request: Request, session: SignedIn) -> Response:
        state = request.query_params.get("state", "")
        states = tuple(s for s in SCHEDULE_STATES if s == state) or SCHEDULE_STATES
        offset = page_offset(request)
        found = await book().repository.find(states=states, limit=PAGE_SIZE + 1, offset=offset)
        return console.render(
            request, "schedules.html", session, rows=[_row(r) for r in found[:PAGE_SIZE]], state=state,
            states=SCHEDULE_STATES, conversation=request.query_params.get("conversation", ""), error=None,
            pager=Pager.of(request, offset + len(found), offset=offset),
        )  # fmt: skip

    @router.post("/ui/schedules", include_in_schema=False)
    async def add(request: Request, form: CheckedForm) -> Response:
        conversation = form.get("conversation").strip()
        try:
            record = await book().add_to(conversation, _request(form), by=CONSOLE_SCHEDULER)
        except ScheduleError as exc:
            found = await book().repository.find(limit=PAGE_SIZE)
            return console.render(
                request, "schedules.html", form.session, status=422, rows=[_row(r) for r in found],
                state="", states=SCHEDULE_STATES, conversation=conversation, error=str(exc),
                pager=Pager.of(request, len(found), offset=0),
            )  # fmt: skip
        return see_other(request, f"/ui/schedules/{record.id}", "scheduled")

    @router.get("/ui/schedules/{schedule_id}", include_in_schema=False)
    async def schedule(schedule_id: int, request: Request, session: SignedIn) -> Response:
        record = await book().repository.get(schedule_id)
        if record is None:
            raise HTTPException(404, f"No schedule {schedule_id}.")
        runs = await book().repository.runs(schedule_id=schedule_id, limit=_RUNS_SHOWN)
        return console.render(request, "schedule.html", session, row=_row(record), runs=runs)

    @router.post("/ui/schedules/{schedule_id}/cancel", include_in_schema=False)
    async def cancel(schedule_id: int, request: Request, form: CheckedForm) -> Response:
        try:
            await book().cancel(schedule_id, by=CONSOLE_SCHEDULER)
        except ScheduleError as exc:
            raise HTTPException(409, str(exc)) from exc
        return see_other(request, f"/ui/schedules/{schedule_id}", "cancelled")

    @router.post("/ui/schedules/{schedule_id}/runs/{run_id}/resend", include_in_schema=False)
    async def resend(schedule_id: int, run_id: int, request: Request, form: CheckedForm) -> Response:
        if not await book().repository.resend(run_id):
            raise HTTPException(409, f"Run {run_id} has no delivery that gave up: nothing to send again.")
        return see_other(request, f"/ui/schedules/{schedule_id}", "resent")


def _row(record: ScheduleRecord) -> dict[str, object]:
    return {
        "record": record,
        "description": describe_schedule(record),
        "next_local": None if record.next_run_at is None else local_time(record.next_run_at, record.timezone),
    }


def _request(form: ConsoleForm) -> ScheduleRequest:
    """The form's one "when" (its kind and value) and its message or prompt, as the API takes them."""
    when, value = form.get("when"), form.get("value").strip()
    if when not in _WHEN:
        raise HTTPException(400, "Choose when: at a time, in a delay, every interval, or a cron expression.")
    text = form.get("text").replace("\r\n", "\n").strip()
    action = form.get("action")
    if action not in ("message", "prompt"):
        raise HTTPException(400, "Choose what it does: send a message, or run a prompt as a turn.")
    timezone = form.get("timezone").strip() or None
    fields: dict[str, str | None] = {"at": None, "after": None, "every": None, "cron": None}
    fields["after" if when == "in" else when] = value
    said = text or None  # an empty text is the book's to refuse, with its own words
    return ScheduleRequest(**fields, message=said if action == "message" else None,
                           prompt=said if action == "prompt" else None, timezone=timezone)  # fmt: skip
