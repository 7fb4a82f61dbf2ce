"""The console's conversation pages: the filtered, paged list with full-text search (admin scope), and one
conversation's page — its segments and compression chain (end reasons, handoff summaries, frozen system
prompts, usage per segment) and every message with tool calls, their arguments and results, and recalled
context marked as such — plus resetting a live conversation.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from agent_core.actor import Actor
from agent_core.search import SearchScope
from agent_core.storage import EndReason, SearchIndexUnavailableError, TokenUsage

from .clock import parse_day
from .guards import CheckedForm, SignedIn
from .pages_support import Console, console_reads, see_other
from .rendering import PAGE_SIZE, Pager, page_offset
from .transcript_view import summary_of, transcript_view

_MESSAGES_PER_PAGE = 100
_SEARCH_RESULTS = 50
_STATES = {"live": True, "ended": False}


def conversation_routes(router: APIRouter, console: Console) -> None:
    backend, clock = console.backend, console.pages.clock

    @router.get("/ui/conversations", include_in_schema=False)
    async def conversations(request: Request, session: SignedIn) -> Response:
        query = request.query_params
        platform = query.get("platform", "").strip() or None
        person = query.get("person", "").strip() or None
        start, end = parse_day(query.get("from")), parse_day(query.get("to"))
        state = query.get("state", "")
        text = query.get("q", "").strip()[:500]
        filters = {"platform": platform or "", "person": person or "", "state": state, "q": text}
        filters |= {"from": start.isoformat() if start else "", "to": end.isoformat() if end else ""}
        if text:
            found, problem, recall = await _search(console, text, person)
            return console.render(
                request, "conversations.html", session, filters=filters, found=found, problem=problem,
                recall=recall, page=None, pager=None,
            )  # fmt: skip
        offset = page_offset(request)
        page = await backend.reads.conversations(
            platform=platform,
            person_id=person,
            active=_STATES.get(state),
            since=clock.day_start(start) if start else None,
            until=clock.day_after(end) if end else None,
            limit=PAGE_SIZE,
            offset=offset,
        )
        pager = Pager.of(request, page.total, offset=offset)
        return console.render(
            request, "conversations.html", session, filters=filters, found=None, problem=None,
            page=page, pager=pager,
        )  # fmt: skip

    @router.get("/ui/conversations/{conversation_id}", include_in_schema=False)
    async def conversation(conversation_id: str, request: Request, session: SignedIn) -> Response:
        row = await console.conversation(conversation_id)
        segments = await backend.agent.lineage(conversation_id)
        summaries = {
            s.id: summary_of(await backend.agent.segment_messages(s.id))
            for s in segments
            if s.parent_session_id
        }
        after_raw = request.query_params.get("after", "0")
        after = int(after_raw) if after_raw.isdigit() and len(after_raw) < 19 else 0
        records = await console_reads(backend).transcript(
            conversation_id, after_id=after, limit=_MESSAGES_PER_PAGE
        )
        total = sum((s.usage for s in segments), TokenUsage())
        return console.render(
            request,
            "conversation.html",
            session,
            row=row,
            segments=segments,
            summaries=summaries,
            messages=transcript_view(records),
            after=after,
            next_after=records[-1].id if len(records) == _MESSAGES_PER_PAGE else None,
            total=total,
            page_size=_MESSAGES_PER_PAGE,
        )

    @router.post("/ui/conversations/{conversation_id}/reset", include_in_schema=False)
    async def reset(conversation_id: str, request: Request, form: CheckedForm) -> Response:
        await console.conversation(conversation_id)
        ended = await backend.agent.end_conversation(conversation_id, EndReason.RESET)
        return see_other(
            request, f"/ui/conversations/{conversation_id}", "reset" if ended else "already-ended"
        )


async def _search(
    console: Console, text: str, person: str | None
) -> tuple[list[object], str | None, str | None]:
    """Matching conversations (every person's, or ``person``'s), a problem to show instead, if any, and
    why the search was lexical only, if it was."""
    scope = SearchScope.for_actor(Actor(person or "admin", is_admin=not person, label="admin"))
    try:
        results = await console.backend.search.search(text, scope, limit=_SEARCH_RESULTS, summarise=False)
    except SearchIndexUnavailableError:
        return [], "The search index is being rebuilt; try again in a moment (see Overview › health).", None
    except ValueError as exc:
        raise HTTPException(400, f"That search could not be run: {exc}") from exc
    recall = f"{results.mode.capitalize()} search: {results.note}." if results.note else None
    return list(results.conversations), None, recall
