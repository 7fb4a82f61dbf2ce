"""``ScheduleBook``: adding, listing and cancelling schedules for a person or an admin, and time zones.

Invariants: every request is read by ``spec.parse_request`` (one validation for the tool, the commands, the
admin API and the CLI); a person's schedule always targets the conversation it was asked in and is listed
and cancelled only by that person; a schedule is only made for a conversation that is live and whose chat
this deployment can deliver to; the per-person limit is checked in the transaction that adds it. A time
zone comes from the request, else the person's (``/timezone``), else the deployment's default.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from agent_core.actor import Actor
from gateway.storage.schedules import (
    OPEN_STATES,
    SCHEDULE_STATES,
    NewSchedule,
    ScheduleRecord,
    ScheduleRepository,
    ScheduleState,
    ScheduleTarget,
)

from .clock import Clock
from .errors import ScheduleLimitError, ScheduleNotFoundError, ScheduleTargetError
from .settings import ScheduleSettings
from .spec import ScheduleRequest, SpecLimits, parse_request, zone


class ScheduleBook:
    """The schedules of one deployment; ``platforms``: where it can deliver (None: anywhere);
    ``on_change``: told when a schedule was added (the local scheduler looks again at once)."""

    def __init__(
        self,
        schedules: ScheduleRepository,
        settings: ScheduleSettings,
        *,
        clock: Clock,
        platforms: Collection[str] | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.repository = schedules
        self.settings = settings
        self._clock = clock
        self._platforms = None if platforms is None else frozenset(platforms)
        self._on_change = on_change

    async def add_for(self, actor: Actor, request: ScheduleRequest) -> ScheduleRecord:
        """A schedule the actor asked for, in the conversation they are in, run as them."""
        if actor.conversation_id is None:
            raise ScheduleTargetError("Schedules are made inside a conversation; this request has none.")
        found = await self._target(actor.conversation_id)
        target = ScheduleTarget(found.conversation_id, actor.person_id, found.platform, found.chat_ref)
        return await self._add(target, request, by=actor.label, is_admin=actor.is_admin)

    async def add_to(self, conversation_id: str, request: ScheduleRequest, *, by: str) -> ScheduleRecord:
        """A schedule an admin added to ``conversation_id``, run as the conversation's person."""
        target = await self._target(conversation_id)
        if not target.person_id:
            raise ScheduleTargetError(
                f"Conversation {conversation_id} has no person to run scheduled turns as."
            )
        return await self._add(target, request, by=by, is_admin=False)

    async def of_person(self, person_id: str, *, open_only: bool = True) -> list[ScheduleRecord]:
        """The person's schedules: open ones (active and paused), or all."""
        states: tuple[ScheduleState, ...] = OPEN_STATES if open_only else SCHEDULE_STATES
        return await self.repository.find(person_id=person_id, states=states, limit=500)

    async def cancel_for(self, person_id: str, schedule_id: int) -> ScheduleRecord:
        """Cancel one of the person's open schedules (``ScheduleNotFoundError`` for anyone else's)."""
        cancelled = await self.repository.cancel(schedule_id, by="its person", person_id=person_id)
        if cancelled is None:
            raise ScheduleNotFoundError(f"You have no open reminder or scheduled task #{schedule_id}.")
        return cancelled

    async def cancel(self, schedule_id: int, *, by: str) -> ScheduleRecord:
        """Cancel any open schedule (an admin)."""
        cancelled = await self.repository.cancel(schedule_id, by=by)
        if cancelled is None:
            raise ScheduleNotFoundError(f"There is no open schedule #{schedule_id}.")
        return cancelled

    async def timezone_of(self, person_id: str) -> str:
        """The person's time zone, else the deployment's default."""
        return await self.repository.timezone_of(person_id) or self.settings.default_timezone

    async def set_timezone(self, person_id: str, name: str) -> str:
        """Set the person's time zone (``ScheduleInputError`` naming an unknown one); returns its name."""
        key = zone(name).key
        await self.repository.set_timezone(person_id, key)
        return key

    async def _add(
        self, target: ScheduleTarget, request: ScheduleRequest, *, by: str, is_admin: bool
    ) -> ScheduleRecord:
        now = await self._clock.now()
        settings = self.settings
        spec = parse_request(
            request,
            now=now,
            timezone=await self.timezone_of(target.person_id),
            limits=SpecLimits(settings.min_interval_s, settings.max_text_chars),
        )
        new = NewSchedule(
            target=target,
            kind=spec.kind,
            spec=spec.spec,
            timezone=spec.timezone,
            action=spec.action,
            text=spec.text,
            first_run_at=spec.first_run_at,
            created_by=by,
            is_admin=is_admin,
        )
        record = await self.repository.create(new, max_per_person=settings.max_per_person)
        if record is None:
            raise ScheduleLimitError(
                f"There are already {settings.max_per_person} open reminders and scheduled tasks for this "
                "person (the most allowed); cancel one first (/reminders)."
            )
        if self._on_change is not None:
            self._on_change()
        return record

    async def _target(self, conversation_id: str) -> ScheduleTarget:
        target = await self.repository.target(conversation_id)
        if target is None:
            raise ScheduleTargetError(
                f"Conversation {conversation_id} does not exist or has no chat to deliver scheduled messages "
                "to."
            )
        if target.ended:
            raise ScheduleTargetError(f"Conversation {conversation_id} has ended; schedule in a live one.")
        if self._platforms is not None and target.platform not in self._platforms:
            raise ScheduleTargetError(
                f"Scheduled messages can't be delivered on {target.platform}; "
                f"they can on: {', '.join(sorted(self._platforms))}."
            )
        return target
