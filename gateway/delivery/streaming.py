"""Streaming replies: progressive edits of one platform message while a turn streams, in the owning process.

Invariants: streaming is optional decoration — the outbox row stays the only source of the final text, so
a stream that fails, or a process that dies mid-stream, still gets the final reply delivered once by the
delivery loop (which edits the streamed message into the final text when it can, else sends normally);
stream edits only spend the chat's budget when a token is free now and one more stays in reserve
(``ChatBudgets.try_take(keep=1)``), so the final delivery never waits on the stream, and never while the
platform's ``retry_after`` holds the chat (which a rate-limited stream edit also sets); a stream shows at
most the first rendered chunk, overflow is the final delivery's business;
a finished stream is handed to the delivery loop through a process-local ``StreamRegistry``. A platform
with a ``TurnActivity`` listener (the web chat) also hears what the turn is doing — thinking, writing, the
tool in use (until the model writes again) — and ``done`` once it ends in any way (answered, failed,
stopped or cut), best effort. A channel whose caller waits on the answer (the OpenAI-compatible API, a
``LiveChannel``) is not edited: it follows the turn's events itself, and its final answer still comes from
the outbox row.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Collection, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, Self

from agent_core.actor import Actor
from agent_core.agent import ReplyDelta, ToolStarted, TurnFailed, TurnFinished
from gateway.contracts import Adapter, ChatRef, OutboundMessage, SendError
from gateway.queue.signals import wait_signal
from gateway.queue.turn_lane import TurnAgent
from gateway.storage.chat_refs import chat_from_text
from gateway.storage.queue import TurnQueueRepository

from .chat_budget import ChatBudgets

_LOG = logging.getLogger("mnemogate.delivery")
STREAMED_KINDS = frozenset({"reply", "error"})
"""Outbox kinds that close a turn, so may finish that turn's stream (never command replies or notices)."""
_FINISH_GRACE_S = 10.0
_STALE_AFTER_S = 600.0


class TurnActivity(Protocol):
    """Hears a streamed turn's progress: ``thinking``, ``writing``, ``tool`` (with its name), ``done`` (with
    ``reply``, the final reply exactly as stored, when the turn finished with one)."""

    async def activity(
        self, chat: ChatRef, state: str, tool: str | None = None, reply: str | None = None
    ) -> None: ...


class _Progress:
    """Tells one listener each change of a turn's state (never the same state twice in a row)."""

    def __init__(self, listener: TurnActivity | None, chat: ChatRef) -> None:
        self._listener = listener
        self._chat = chat
        self._last: tuple[str, str | None] | None = None

    async def show(self, state: str, tool: str | None = None, reply: str | None = None) -> None:
        if self._listener is None or self._last == (state, tool):
            return
        self._last = (state, tool)
        try:
            await self._listener.activity(self._chat, state, tool, reply)
        except Exception:
            # Decoration like the stream itself: the turn goes on whatever the listener does.
            _LOG.warning("could not show a turn's activity", exc_info=True)


@dataclass(frozen=True)
class StreamedMessage:
    """The platform message a finished stream left behind, with the rendered text it shows."""

    chat_ref: str
    platform_message_id: str
    shown: str
    at: float


class StreamRegistry:
    """Finished streams waiting for their turn's final delivery (this process only), by conversation and
    the message the turn answers: a late reply never edits the stream of the turn after it, and the next
    turn's start never drops a stream whose reply is still to be delivered."""

    def __init__(self) -> None:
        self._streams: dict[tuple[str, str | None], StreamedMessage] = {}

    def put(self, conversation_id: str, reply_to: str | None, streamed: StreamedMessage) -> None:
        now = time.time()
        for key in [k for k, s in self._streams.items() if now - s.at > _STALE_AFTER_S]:
            del self._streams[key]  # a turn whose reply was never queued here (lease lost)
        self._streams[(conversation_id, reply_to)] = streamed

    def discard(self, conversation_id: str, reply_to: str | None) -> None:
        """Forget an earlier run's stream of the same answer (a turn run again after a lost lease)."""
        self._streams.pop((conversation_id, reply_to), None)

    def take(self, conversation_id: str, chat_ref: str, reply_to: str | None) -> StreamedMessage | None:
        streamed = self._streams.get((conversation_id, reply_to))
        if streamed is None or streamed.chat_ref != chat_ref:
            return None
        del self._streams[(conversation_id, reply_to)]
        return streamed

    def __len__(self) -> int:
        return len(self._streams)


class ReplyStream:
    """``async with ReplyStream(...)``: one turn's stream; ``add`` text, ``finish`` for the message left."""

    def __init__(
        self,
        *,
        adapter: Adapter,
        chat_ref: str,
        reply_to: str | None,
        budgets: ChatBudgets,
        interval_s: float,
    ) -> None:
        self._adapter = adapter
        self._chat_ref = chat_ref
        self._chat: ChatRef = chat_from_text(chat_ref)
        self._reply_to = reply_to
        self._budgets = budgets
        self._interval_s = interval_s
        self._key = f"stream-{secrets.token_hex(6)}"
        self._text = ""
        self._shown = ""
        self._message_id: str | None = None
        self._failed = False
        self._changed = asyncio.Event()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._run(), name=f"stream-{self._chat_ref}")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._closing.set()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def add(self, text: str) -> None:
        self._text += text
        self._changed.set()

    def new_step(self) -> None:
        """A tool call began: the reply is the next step's text, so start over (the message stays)."""
        self._text = ""

    async def finish(self) -> StreamedMessage | None:
        """Stop editing (an in-flight send is awaited, so its message id is known); the message left."""
        self._closing.set()
        self._changed.set()
        if self._task is not None:
            await asyncio.wait([self._task], timeout=_FINISH_GRACE_S)
        if self._message_id is None:
            return None
        return StreamedMessage(self._chat_ref, self._message_id, self._shown, time.time())

    async def _run(self) -> None:
        while not self._failed:
            await self._changed.wait()
            if self._closing.is_set():
                return
            self._changed.clear()
            pause = await self._push()
            await wait_signal(self._closing, max(pause, self._interval_s))
            if self._closing.is_set():
                return

    async def _push(self) -> float:
        """Show the current text once; returns how long to pause (a platform's retry_after)."""
        first = self._first_chunk()
        if first is None or first == self._shown:
            return 0.0
        if not self._budgets.try_take(self._chat.platform, self._chat_ref, keep=1):
            self._changed.set()  # try again after the interval
            return 0.0
        try:
            if self._message_id is None:
                message = OutboundMessage(
                    chat=self._chat,
                    text=first,
                    idempotency_key=self._key,
                    reply_to_message_id=self._reply_to,
                    kind="stream",
                )
                self._message_id = (await self._adapter.send(message)).platform_message_id
            else:
                await self._adapter.edit(self._chat, self._message_id, first)
            self._shown = first
        except SendError as exc:
            if exc.retry_after:
                # The platform's wait holds the whole chat: the reply's delivery and notices wait as well.
                self._budgets.hold(self._chat.platform, self._chat_ref, exc.retry_after)
            if exc.retryable:
                self._changed.set()
                return exc.retry_after or 0.0
            self._failed = True
            _LOG.info("streaming to %s stopped: %s", self._adapter.name, exc.kind)
        except Exception:
            # The adapter boundary: the stream is decoration; the final reply is delivered regardless.
            self._failed = True
            _LOG.warning("streaming to %s failed", self._adapter.name, exc_info=True)
        return 0.0

    def _first_chunk(self) -> str | None:
        if not self._text.strip():
            return None
        try:
            chunks = list(self._adapter.render(self._text))
        except Exception:
            _LOG.warning("adapter %s could not render a partial reply", self._adapter.name, exc_info=True)
            return None
        first = chunks[0] if chunks else ""
        if not first.strip() or not self._adapter.capabilities.fits(first, edit=True):
            return None
        return first


class TurnFollower(Protocol):
    def on_event(self, event: object) -> None:
        """One event of the turn that answers the followed message; must not block."""
        ...


class LiveChannel(Protocol):
    """A channel whose callers follow the turn that answers them as it runs (in this process)."""

    def follow(self, reply_to: str) -> TurnFollower | None:
        """Who waits for the answer to the message ``reply_to`` here (None: nobody)."""
        ...


class StreamingAgent:
    """A ``TurnAgent`` that streams replies on the platforms named in ``streaming`` (which can edit) and
    hands each turn of a ``live`` channel's platform to the caller that follows it."""

    def __init__(
        self,
        agent: TurnAgent,
        *,
        queue: TurnQueueRepository,
        adapters: Mapping[str, Adapter],
        streaming: Collection[str],
        budgets: ChatBudgets,
        registry: StreamRegistry,
        interval_s: Mapping[str, float] | None = None,
        live: Mapping[str, LiveChannel] | None = None,
        activity: Mapping[str, TurnActivity] | None = None,
    ) -> None:
        """``live``: channels by platform whose callers follow their turns; ``activity``: listeners by
        platform, told what each streamed turn of theirs is doing."""
        self._agent = agent
        self._queue = queue
        self._adapters = {
            name: adapter
            for name, adapter in adapters.items()
            if name in streaming and adapter.capabilities.can_edit
        }
        self._budgets = budgets
        self._registry = registry
        self._interval_s = dict(interval_s or {})
        self._live = dict(live or {})
        self._activity = dict(activity or {})

    @property
    def platforms(self) -> frozenset[str]:
        return frozenset(self._adapters)

    def run(self, actor: Actor) -> AsyncIterator[object]:
        channel = self._live.get(actor.platform)
        if channel is not None:
            return self._followed(actor, channel)
        adapter = self._adapters.get(actor.platform)
        if adapter is None:
            return self._agent.run(actor)
        return self._streamed(actor, adapter)

    async def _followed(self, actor: Actor, channel: LiveChannel) -> AsyncIterator[object]:
        target = await self._queue.running_target(actor.conversation())
        follower = channel.follow(target.reply_to) if target is not None and target.reply_to else None
        events = self._agent.run(actor)
        try:
            async for event in events:
                if follower is not None:
                    follower.on_event(event)
                yield event
        finally:
            if isinstance(events, AsyncGenerator):
                await events.aclose()

    async def _streamed(self, actor: Actor, adapter: Adapter) -> AsyncIterator[object]:
        conversation_id = actor.conversation()
        target = await self._queue.running_target(conversation_id)
        events = self._agent.run(actor)
        try:
            if target is None:
                async for event in events:
                    yield event
                return
            self._registry.discard(conversation_id, target.reply_to)
            progress = _Progress(self._activity.get(actor.platform), chat_from_text(target.chat_ref))
            stream = ReplyStream(
                adapter=adapter,
                chat_ref=target.chat_ref,
                reply_to=target.reply_to,
                budgets=self._budgets,
                interval_s=self._interval_s.get(actor.platform, 1.0),
            )
            await progress.show("thinking")
            reply: str | None = None
            try:
                async with stream:
                    async for event in events:
                        await self._step(event, stream, progress, (conversation_id, target.reply_to))
                        if isinstance(event, TurnFinished):
                            reply = event.text
                        yield event
            finally:
                await progress.show("done", reply=reply)
        finally:
            if isinstance(events, AsyncGenerator):
                await events.aclose()

    async def _step(
        self, event: object, stream: ReplyStream, progress: _Progress, answering: tuple[str, str | None]
    ) -> None:
        """``answering``: the conversation and the message this turn answers (the stream's registry key)."""
        if isinstance(event, ReplyDelta):
            stream.add(event.text)
            await progress.show("writing")
            # Let the stream's task show the text: a model that yields deltas without awaiting
            # (offline, a cached reply) would otherwise finish before the first send.
            await asyncio.sleep(0)
        elif isinstance(event, ToolStarted):
            stream.new_step()
            await progress.show("tool", event.name)
        elif isinstance(event, TurnFinished | TurnFailed):
            streamed = await stream.finish()
            if streamed is not None:
                self._registry.put(*answering, streamed)
