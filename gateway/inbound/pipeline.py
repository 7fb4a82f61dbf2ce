"""The inbound pipeline: every adapter's sink. A message passes the stages in order until one stops it.

dedupe -> ignore bots -> addressed -> access -> rate limit -> command table -> turn queue. Each stage
returns the (possibly enriched) context to continue, or a ``Stop`` naming why processing ended.
Invariants: outside a DM only a message addressed to the bot (a mention, a reply to it, a free-response
chat, a thread it takes part in; the adapter says which) goes further, so group chatter never earns a
notice or a turn; messages of one chat are processed one at a time in arrival order (``ChatOrder``), so
they are stored and shown to the model in the order people wrote them (a slow command, such as
``/compress``, is recorded in order and then runs on its own, so neither its chat nor its adapter waits
for it; ``drain`` lets it finish at shutdown); a refused sender never reaches
the queue or a command; a notice or command reply is queued through the outbox under a key derived from
the event id, so a platform retry never sends it twice; ``handle`` returns only once the message is
durably recorded (or deliberately dropped), so the adapter may acknowledge the platform then. A refused
message whose sender waits on the hand-off (``caller_waits``: the web chat and the API) is neither
recorded nor answered with a notice: the refusal is returned in the ``InboundOutcome`` (HTTP 429/403), so
nothing is "accepted" and then lost, and a retry of the same event is judged again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agent_core.actor import Actor
from agent_core.storage.conversations import ConversationRepository
from gateway.access import AccessControl, Admitted, RateLimiter
from gateway.contracts import ChatKind, InboundMessage, InboundOutcome
from gateway.delivery import Outbox
from gateway.queue import TurnQueue
from gateway.sessions import SessionKey

from .chat_order import ChatOrder
from .command_table import CommandCall, CommandTable
from .session_rules import session_key_for
from .settings import SessionSettings

_LOG = logging.getLogger("mnemogate.inbound")
_DRAIN_GRACE_S = 10.0
_REFUSALS = frozenset({"denied", "rate_limited"})


@dataclass(frozen=True)
class InboundContext:
    message: InboundMessage
    key: SessionKey
    actor: Actor | None = None
    """Who the message acts for, set once by the access stage; every later stage takes it from here."""


@dataclass(frozen=True)
class Stop:
    """Why processing ended: duplicate, bot, unaddressed, denied, rate_limited, command, queued."""

    reason: str
    conversation_id: str | None = None
    then: Callable[[], Coroutine[Any, Any, None]] | None = None
    """Work left for after the chat's turn in ``ChatOrder`` is released (a slow command)."""
    notice: str | None = None
    retry_after_s: float | None = None

    def outcome(self) -> InboundOutcome:
        """What the adapter is told: accepted, or refused with the refusal's notice and wait."""
        if self.reason not in _REFUSALS:
            return InboundOutcome(True, self.reason)
        return InboundOutcome(False, self.reason, self.retry_after_s, self.notice)


Stage = Callable[[InboundContext], Awaitable[InboundContext | Stop]]
OutcomeObserver = Callable[[str, str], None]
"""Told (platform, outcome) per message: accepted, duplicate, bot, unaddressed, denied, rate_limited or
command."""


class InboundPipeline:
    """Built once per process by the composition root; ``handle`` is the adapters' ``InboundSink``."""

    def __init__(
        self,
        *,
        queue: TurnQueue,
        outbox: Outbox,
        access: AccessControl,
        limiter: RateLimiter,
        commands: CommandTable,
        sessions: SessionSettings,
        observer: OutcomeObserver | None = None,
        conversations: ConversationRepository | None = None,
    ) -> None:
        """``conversations``: to file each command's reply under the conversation live once it ran (a chat
        window then shows it with that conversation, also after switching away and back)."""
        self._observer = observer
        self._conversations = conversations
        self._queue = queue
        self._outbox = outbox
        self._access = access
        self._limiter = limiter
        self._commands = commands
        self._sessions = sessions
        self._order = ChatOrder()
        self._after: set[asyncio.Task[None]] = set()
        self.stages: Sequence[Stage] = (
            self._dedupe,
            self._ignore_bots,
            self._addressed,
            self._admit,
            self._rate_limit,
            self._command,
            self._enqueue,
        )

    async def handle(self, message: InboundMessage) -> InboundOutcome:
        return (await self.process(message)).outcome()

    async def process(self, message: InboundMessage) -> Stop:
        async with self._order.turn(message.chat):
            outcome = await self._process(message)
        if outcome.then is not None:
            # Recorded already: the adapter may acknowledge now, the slow part finishes on its own.
            task = asyncio.create_task(outcome.then(), name=f"after-{message.platform}:{message.event_id}")
            self._after.add(task)
            task.add_done_callback(self._after_done)
        return outcome

    def _after_done(self, task: asyncio.Task[None]) -> None:
        self._after.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _LOG.error("a slow command failed", exc_info=task.exception())

    async def drain(self, grace_s: float = _DRAIN_GRACE_S) -> None:
        """Let slow commands still running finish (up to ``grace_s``), then cancel the rest."""
        if not self._after:
            return
        _, late = await asyncio.wait(set(self._after), timeout=grace_s)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    async def _process(self, message: InboundMessage) -> Stop:
        context = InboundContext(message, session_key_for(message, self._sessions))
        for stage in self.stages:
            outcome = await stage(context)
            if isinstance(outcome, Stop):
                _LOG.debug("event %s:%s stopped: %s", message.platform, message.event_id, outcome.reason)
                if self._observer is not None:
                    self._observer(
                        message.platform, "accepted" if outcome.reason == "queued" else outcome.reason
                    )
                return outcome
            context = outcome
        raise AssertionError("the last stage always stops")

    async def _dedupe(self, context: InboundContext) -> InboundContext | Stop:
        return Stop("duplicate") if await self._queue.seen(context.message) else context

    async def _ignore_bots(self, context: InboundContext) -> InboundContext | Stop:
        # Our own echoes and other bots: answering them risks bot-to-bot loops.
        return Stop("bot") if context.message.sender.is_bot else context

    async def _addressed(self, context: InboundContext) -> InboundContext | Stop:
        message = context.message
        if message.chat.kind == ChatKind.DM or message.mentions_bot or message.replies_to_bot:
            return context
        return Stop("unaddressed")

    async def _admit(self, context: InboundContext) -> InboundContext | Stop:
        decision = await self._access.admit(context.message)
        if isinstance(decision, Admitted):
            return replace(context, actor=decision.actor)
        await self._refuse(context.message, decision.notice, "denied")
        return Stop("denied", notice=decision.notice)

    async def _rate_limit(self, context: InboundContext) -> InboundContext | Stop:
        decision = self._limiter.check(_actor(context).person_id)
        if decision.allowed:
            return context
        await self._refuse(context.message, decision.notice, "rate_limited")
        return Stop("rate_limited", notice=decision.notice, retry_after_s=decision.retry_after_s)

    async def _command(self, context: InboundContext) -> InboundContext | Stop:
        parsed = self._commands.parse(context.message.text)
        if parsed is None:
            return context
        command, name, argument = parsed
        message = context.message
        if not await self._queue.record_event(message, "command"):
            return Stop("duplicate")
        call = CommandCall(name, argument, message, _actor(context), context.key)

        async def run() -> None:
            reply = await command.handler(call)
            live = None
            if self._conversations is not None:
                live = await self._conversations.live_conversation(context.key.to_string())
            await self._outbox.notify(
                message.chat,
                reply,
                idempotency_key=f"cmd:{message.platform}:{message.event_id}",
                conversation_id=live.id if live is not None else None,
                kind="command",
                reply_to=message.message_id,
                request_text=message.text,
            )

        if command.slow:
            return Stop("command", then=run)
        await run()
        return Stop("command")

    async def _enqueue(self, context: InboundContext) -> InboundContext | Stop:
        result = await self._queue.enqueue(context.message, context.key, _actor(context))
        if result.duplicate:
            return Stop("duplicate")
        return Stop("queued", result.conversation_id)

    async def _refuse(self, message: InboundMessage, notice: str | None, kind: str) -> None:
        if message.caller_waits:
            return  # the caller is told in the outcome; recording it would turn its retry into a duplicate
        if not await self._queue.record_event(message, kind) or notice is None:
            return
        await self._outbox.notify(
            message.chat, notice, idempotency_key=f"{kind}:{message.platform}:{message.event_id}", kind=kind
        )


def _actor(context: InboundContext) -> Actor:
    if context.actor is None:
        raise AssertionError("the access stage runs before any stage that needs the actor")
    return context.actor
