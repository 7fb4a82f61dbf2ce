"""``/v1``: existing OpenAI clients talk to the agent through the normal pipeline (the "api" platform).

Who a client is: the conversation (chat id, and so account and person, on platform "api") belongs to
the pair (bearer token, ``user``) — ``<token fingerprint>.<user>``, the fingerprint being a keyed hash of
the presented token (``ClientKey.api_client``), never the token. A request without ``user`` is
stateless: it gets a conversation and person of its own (``<fingerprint>+<random>``), so it shares no
memory or history with any other request.

What a request's ``messages`` mean (``gateway.api.client_history``): the last user message is what is said
— stored, searched and remembered like any platform message; system (and developer) messages are this
reply's instructions; earlier turns the conversation already holds are not repeated (with ``user`` set the
gateway's stored conversation is the history), and earlier turns it does not hold — a client that keeps
its own history, any stateless request — are given to the model as context, once. Instructions and those
turns reach the model fenced as client context on the message's request bytes (its ``api_content``), never
in the stored message and never in the segment's frozen system prompt (DESIGN §6, invariants 1 and 2).

Every request gets ITS answer: requests of one conversation take turns, and each waits for the reply to
its own message (``ApiChannel.ask``), never for a notice or another request's reply. A rate-limited
request is answered 429 with Retry-After and nothing is stored; a turn that failed is a 502, a late one
504. ``stream: true`` sends the reply's text as the model produces it (when the turn runs in this process;
a turn claimed by another worker process arrives as one delta), in ``chat.completion.chunk`` events ending
with ``data: [DONE]``; ``stream_options.include_usage`` adds the usage chunk. Usage is the growth of the
conversation's stored token counters across the request. Every response names the model that answered.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from agent_core.agent import ClientTurn
from gateway.api import (
    ApiChannel,
    LiveAnswer,
    RequestTurns,
    ServedModel,
    StoredHistory,
    Transcripts,
    UnanswerableRequestError,
    stored_history,
)
from gateway.http.access import BearerGuard
from gateway.identity import ClientKey
from gateway.storage.admin_reads import AdminReads, TokenTotals
from gateway.webchat import ChannelNotStartedError, MessageRefusedError, ReplyTimeoutError

from .openai_wire import (
    STREAM_DONE,
    Completion,
    CompletionRequest,
    OpenAIRoute,
    model_card,
    openai_error,
    retry_after,
    stream_error,
    usage_of,
)

UsageRead = Callable[[], Awaitable[dict[str, int]]]


def api_chat_id(key: ClientKey, request: Request, user: str | None) -> str:
    """The conversation of this request: (token fingerprint, user), or a fresh one without ``user``."""
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    client = key.api_client(presented.strip() if scheme.lower() == "bearer" else None)
    return f"{client}.{user}" if user else f"{client}+{secrets.token_hex(8)}"


def openai_router(
    channel: ApiChannel,
    guard: BearerGuard,
    timeout: float,
    *,
    model: ServedModel,
    client_key: ClientKey | None = None,
    reads: AdminReads | None = None,
    transcripts: Transcripts | None = None,
) -> APIRouter:
    """The endpoints on ``channel``, answered by ``model``; usage is read through ``reads`` (zero without
    it) and a request's earlier turns are compared with the stored ones through ``reads`` and
    ``transcripts`` (without both, every earlier turn is given to the model).

    ``client_key`` fingerprints tokens (the home's key; without it, a key for this process only).
    """
    router = APIRouter(dependencies=[Depends(guard)], route_class=OpenAIRoute)
    key = client_key or ClientKey.ephemeral()
    listed_at = int(time.time())

    async def tokens(prefix: str) -> TokenTotals:
        return TokenTotals() if reads is None else await reads.live_token_totals(prefix)

    @router.get("/v1/models")
    async def models() -> dict[str, object]:
        return {"object": "list", "data": [model_card(model, listed_at)]}

    @router.get("/v1/models/{model_id:path}", response_model=None)
    async def one_model(model_id: str) -> dict[str, object] | JSONResponse:
        if model_id != model.id:
            return openai_error(
                404,
                "no such model here; GET /v1/models lists the one that answers",
                code="model_not_found",
                param="model",
            )
        return model_card(model, listed_at)

    @router.post("/v1/chat/completions", response_model=None)
    async def completions(body: CompletionRequest, request: Request) -> JSONResponse | StreamingResponse:
        try:
            turns = RequestTurns.of([ClientTurn(m.role, m.text()) for m in body.messages])
        except UnanswerableRequestError as exc:
            return openai_error(400, str(exc), param="messages")
        chat_id = api_chat_id(key, request, body.user)
        prefix = channel.key_prefix(chat_id)
        completion = Completion.new(model)
        before = TokenTotals()

        async def prepare() -> str | None:
            # Runs once this request's turn in its conversation came: earlier requests are answered.
            nonlocal before
            before = await tokens(prefix)
            held = StoredHistory()
            if reads is not None and transcripts is not None and body.user and turns.earlier:
                held = await stored_history(reads, transcripts, prefix)
            return turns.model_text(held, budget_chars=model.client_context_chars)

        async def usage() -> dict[str, int]:
            after = await tokens(prefix)
            return usage_of(
                max(0, after.input_tokens - before.input_tokens),
                max(0, after.output_tokens - before.output_tokens),
            )

        try:
            answer = await channel.ask(
                chat_id, turns.said, timeout=timeout, prepare=prepare, live=body.stream
            )
        except ChannelNotStartedError as exc:
            return openai_error(503, str(exc))
        except MessageRefusedError as exc:
            if exc.reason == "rate_limited":
                return openai_error(429, str(exc), headers=retry_after(exc.retry_after_s))
            return openai_error(403, str(exc))
        except ReplyTimeoutError as exc:
            return openai_error(504, f"the agent did not reply in time: {exc}", kind="timeout")
        if body.stream:
            usage_read = usage if body.include_usage else None
            return StreamingResponse(_stream(answer, completion, usage_read), media_type="text/event-stream")
        try:
            reply = await answer.answer()
        except ReplyTimeoutError as exc:
            return openai_error(504, f"the agent did not reply in time: {exc}", kind="timeout")
        if reply.kind == "error":
            return openai_error(502, reply.text)
        if reply.kind == "budget":  # OpenAI's own answer to a spent quota
            return openai_error(429, reply.text, kind="insufficient_quota", code="insufficient_quota")
        return JSONResponse(completion.body(reply.text, await usage()))

    return router


async def _stream(answer: LiveAnswer, completion: Completion, usage: UsageRead | None) -> AsyncIterator[str]:
    yield completion.chunk({"role": "assistant", "content": ""})
    async for delta in answer.deltas():
        yield completion.chunk({"content": delta})
    try:
        reply = await answer.answer()
    except ReplyTimeoutError as exc:
        yield stream_error(f"the agent did not reply in time: {exc}", "timeout")
        return
    if reply.kind in ("error", "budget"):
        yield stream_error(reply.text, "insufficient_quota" if reply.kind == "budget" else "server_error")
        return
    yield completion.chunk({}, "stop")
    if usage is not None:
        yield completion.usage_chunk(await usage())
    yield STREAM_DONE
