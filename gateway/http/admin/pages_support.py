"""What every console page module shares: the ``Console`` bundle (backend, templates, guard) and the lookups
that turn a missing thing into a clear 404/503 page instead of an error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request
from starlette.responses import HTMLResponse, RedirectResponse

from agent_core.skills import SkillStore
from gateway.storage.admin_reads import ConversationRow, PersonRow
from gateway.storage.console_reads import ConsoleReads

from .backend import AdminBackend
from .guards import ConsoleGuard
from .rendering import ConsolePages
from .sessions import ConsoleSession


@dataclass(frozen=True)
class Console:
    """The console's parts, handed to each page module."""

    backend: AdminBackend
    pages: ConsolePages
    guard: ConsoleGuard

    def render(
        self, request: Request, template: str, session: ConsoleSession, *, status: int = 200, **context: Any
    ) -> HTMLResponse:
        csrf = self.guard.sessions.csrf_token(session)
        return self.pages.render(request, template, status=status, csrf=csrf, context=context)

    async def conversation(self, conversation_id: str) -> ConversationRow:
        row = await self.backend.reads.conversation(conversation_id)
        if row is None:
            raise HTTPException(404, "There is no conversation with that id.")
        return row

    async def person(self, person_id: str) -> PersonRow:
        row = await self.backend.reads.person(person_id)
        if row is None:
            raise HTTPException(404, "There is no person with that id.")
        return row


def console_reads(backend: AdminBackend) -> ConsoleReads:
    if backend.console is None:
        raise HTTPException(503, "This gateway was started without the console's reads (Storage.console).")
    return backend.console


def skill_store(backend: AdminBackend) -> SkillStore:
    if backend.skills is None:
        raise HTTPException(503, "This gateway was started without its skill store.")
    return backend.skills


def see_other(request: Request, path: str, done: str | None = None) -> RedirectResponse:
    """303 to a console path (relative to the mount), with a notice key."""
    root = request.scope.get("root_path", "")
    separator = "&" if "?" in path else "?"
    suffix = f"{separator}done={done}" if done else ""
    return RedirectResponse(f"{root}{path}{suffix}", status_code=303)
