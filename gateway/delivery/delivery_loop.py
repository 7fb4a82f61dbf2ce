"""The delivery loop of one process: sends the outbox rows of the platforms whose adapters it owns.

Invariants: rows of one chat go out in order (the outbox only hands out a chat's oldest undelivered row);
each chunk's platform message id is recorded before the next chunk is sent (the last one in the same write
that marks the row sent), so a crash mid-reply resumes at the first unsent chunk, and a record the database
could not take is retried (for up to ``claim_s``) rather than left for the row to be sent again; every
send, edit or typing spends the chat's token budget; a transient ``SendError`` is retried after its full
``retry_after`` (or a backoff), and a ``retry_after`` holds the chat's budget for that long, so nothing
else is sent to that chat meanwhile; a ``BadFormatError`` chunk is re-sent once as plain text, and after
``max_attempts`` the row is marked failed, logged and counted. When this process streamed the turn
(``streams``), the reply's first chunk is an edit of the streamed message into the final text (recorded
as that chunk), falling back to a normal send if the edit fails. With ``routing`` (the web chat and the API,
whose callers wait on the process that took their message) it claims the replies this process's callers
await at once and others' only after ``delivery.reply_grace_s``. A loop that ``takes_over`` (a leased
adapter's new owner) first hands back the rows its platforms' previous owner left claimed, so they go out
now rather than when those claims run out. The loop also runs the ``OutboxPruner``
(delivered rows past ``delivery.outbox_keep_days``). It reaches the outbox only through its port.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Self, final

from agent_core.storage.errors import StateError
from gateway.contracts import Adapter, BadFormatError, ChatRef, OutboundMessage, SendError
from gateway.queue.signals import Signals, wait_signal
from gateway.queue.worker_pool import new_holder
from gateway.storage.chat_refs import chat_from_text
from gateway.storage.outbox import ChunkReceipt, OutboxItem, OutboxRepository, ReplyRouting

from .chat_budget import ChatBudgets
from .outbox_pruner import OutboxPruner
from .plain_text import plain_text
from .settings import DeliverySettings
from .streaming import STREAMED_KINDS, StreamedMessage, StreamRegistry

_LOG = logging.getLogger("mnemogate.delivery")
_RECORD_RETRY_S = 0.1
_RECORD_RETRY_MAX_S = 2.0

FailureHook = Callable[[str, str], None]
"""Called with (platform, error) each time a row is given up on: the metrics counter hook."""


def _log_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        _LOG.error("task %s crashed", task.get_name(), exc_info=task.exception())


class _GiveUp(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@final
class DeliveryLoop:
    """``async with DeliveryLoop(...)``: delivers until the context exits."""

    def __init__(
        self,
        *,
        outbox: OutboxRepository,
        adapters: Mapping[str, Adapter],
        signals: Signals,
        settings: DeliverySettings,
        budgets: ChatBudgets | None = None,
        on_failure: FailureHook | None = None,
        holder: str | None = None,
        streams: StreamRegistry | None = None,
        routing: Callable[[], ReplyRouting] | None = None,
        takes_over: bool = False,
    ) -> None:
        self.outbox = outbox
        self._adapters = dict(adapters)
        self._signals = signals
        self._settings = settings
        self.budgets = budgets or ChatBudgets(settings.rate_for)
        self._on_failure = on_failure
        self.holder = holder or new_holder()
        self._streams = streams
        self._routing = routing
        self._takes_over = takes_over
        self._tasks: set[asyncio.Task[None]] = set()
        self._delivery_ended = False
        self._loop_task: asyncio.Task[None] | None = None
        self.pruner = OutboxPruner(outbox, settings)
        self._prune_task: asyncio.Task[None] | None = None
        self._stopping = False
        self.sent = 0
        self.failed = 0

    async def __aenter__(self) -> Self:
        if self._takes_over:
            await self._take_over_claims()
        self._loop_task = asyncio.create_task(self._run(), name="delivery")
        if self.pruner.enabled:
            self._prune_task = asyncio.create_task(self.pruner.run(), name="outbox-prune")
            self._prune_task.add_done_callback(_log_crash)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stopping = True
        if self._prune_task is not None:
            self._prune_task.cancel()
            await asyncio.gather(self._prune_task, return_exceptions=True)
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        # A send cancelled mid-flight may reach the platform unrecorded and be sent again later.
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=self._settings.shutdown_grace_s)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(StateError):
            await self.outbox.release_claims(self.holder)

    async def _take_over_claims(self) -> None:
        """The previous owner's rows, still claimed, are delivered now instead of after their claim ends."""
        try:
            taken = await self.outbox.release_others(sorted(self._adapters), self.holder)
        except StateError as exc:
            _LOG.warning(
                "could not take over the previous owner's deliveries (%s); they wait for their claims", exc
            )
            return
        if taken:
            _LOG.info(
                "taking over %d delivery(ies) the previous owner of %s left claimed",
                taken,
                sorted(self._adapters),
            )
            self._signals.outbox.set()

    async def _run(self) -> None:
        platforms = sorted(self._adapters)
        interval = self._settings.poll_min_s
        signalled = False
        while platforms and not self._stopping:
            # Woken by a row just queued, the claim need not look first; a delivery that ended sets
            # the same signal (its chat's next row may be claimable, or nothing), and then it looks.
            expect_work = signalled and not self._delivery_ended
            self._signals.outbox.clear()
            self._delivery_ended = False
            claimed = await self._claim(platforms, expect_work=expect_work)
            for item in claimed:
                task = asyncio.create_task(self._deliver(item), name=f"deliver-{item.id}")
                self._tasks.add(task)
                task.add_done_callback(self._done)
            backoff = min(interval * 2, self._settings.poll_max_s)
            interval = self._settings.poll_min_s if claimed else backoff
            signalled = await wait_signal(self._signals.outbox, interval)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # The row stays claimed until its claim expires, then another attempt picks it up.
            _LOG.error("delivery task %s crashed", task.get_name(), exc_info=task.exception())
        # The chat's next row became claimable.
        self._delivery_ended = True
        self._signals.outbox.set()

    async def _claim(self, platforms: Sequence[str], *, expect_work: bool) -> list[OutboxItem]:
        free = self._settings.max_in_flight - len(self._tasks)
        if free <= 0:
            return []
        try:
            return await self.outbox.claim(
                platforms,
                self.holder,
                claim_s=self._settings.claim_s,
                limit=free,
                expect_work=expect_work,
                routing=self._routing() if self._routing is not None else None,
            )
        except StateError:
            _LOG.warning("could not claim outbox rows; retrying", exc_info=True)
            return []

    async def _deliver(self, item: OutboxItem) -> None:
        adapter = self._adapters[item.platform]
        chat = chat_from_text(item.chat_ref)
        try:
            chunks = self._render(adapter, item.text)
            streamed = self._streamed(item)
            last: ChunkReceipt | None = None
            for index, chunk in enumerate(chunks):
                if index in item.sent_chunks:
                    continue
                receipt_id = None
                if index == 0 and streamed is not None:
                    receipt_id = await self._finish_stream(adapter, chat, item, chunk, streamed)
                if receipt_id is None:
                    receipt_id = await self._send_chunk(adapter, chat, item, index, chunk)
                last = ChunkReceipt(index, receipt_id)
                if index < len(chunks) - 1:  # the last receipt is written with the row's completion
                    await self._record(item, functools.partial(self.outbox.record_chunk, item.id, last))
                    last = None
            await self._record(item, functools.partial(self.outbox.mark_sent, item.id, last))
            self.sent += 1
        except _GiveUp as exc:
            await self._give_up(item, exc.reason)

    async def _record(self, item: OutboxItem, write: Callable[[], Awaitable[None]]) -> None:
        """Record what reached the platform; while the database is out of reach keep trying, for as long
        as a claim lasts: a send left unrecorded is sent again by the row's next claim."""
        give_up_at = time.monotonic() + self._settings.claim_s
        delay = _RECORD_RETRY_S
        while True:
            try:
                await write()
                return
            except StateError as exc:
                if time.monotonic() + delay > give_up_at:
                    raise
                _LOG.warning("could not record the delivery of outbox row %d (%s); retrying", item.id, exc)
            await asyncio.sleep(delay)  # backoff while the database is away
            delay = min(delay * 2, _RECORD_RETRY_MAX_S)

    def _streamed(self, item: OutboxItem) -> StreamedMessage | None:
        if self._streams is None or item.kind not in STREAMED_KINDS or 0 in item.sent_chunks:
            return None
        return self._streams.take(item.conversation_id, item.chat_ref, item.reply_to)

    async def _finish_stream(
        self, adapter: Adapter, chat: ChatRef, item: OutboxItem, chunk: str, streamed: StreamedMessage
    ) -> str | None:
        """Edit the streamed message into ``chunk``; None when that failed (the chunk is then sent)."""
        message_id = streamed.platform_message_id
        if chunk == streamed.shown and not adapter.capabilities.marks_final_edit:
            return message_id
        if not adapter.capabilities.fits(chunk, edit=True):
            return None
        text, plain_tried = chunk, False
        for _ in range(self._settings.max_attempts):
            await self.budgets.acquire(chat.platform, item.chat_ref)
            try:
                await adapter.edit(chat, message_id, text)
                return message_id
            except BadFormatError:
                if plain_tried:
                    return None
                text, plain_tried = plain_text(chunk), True
            except SendError as exc:
                self._hold_chat(item, exc)
                if not exc.retryable:
                    break
                await asyncio.sleep(exc.retry_after or self._settings.backoff_initial_s)
            except Exception:
                _LOG.warning("adapter %s raised while finishing a stream", adapter.name, exc_info=True)
                break
        _LOG.info("could not edit the streamed reply of outbox row %d; sending it instead", item.id)
        return None

    @staticmethod
    def _render(adapter: Adapter, text: str) -> list[str]:
        try:
            return list(adapter.render(text)) or [text]
        except Exception:
            # The adapter boundary: a renderer bug must not swallow the reply; send it unformatted.
            _LOG.error(
                "adapter %s could not render a reply; sending it as plain text", adapter.name, exc_info=True
            )
            return [text]

    async def _send_chunk(
        self, adapter: Adapter, chat: ChatRef, item: OutboxItem, index: int, chunk: str
    ) -> str:
        text, plain_tried = chunk, False
        for attempt in range(1, self._settings.max_attempts + 1):
            await self.budgets.acquire(chat.platform, item.chat_ref)
            message = OutboundMessage(
                chat=chat,
                text=text,
                idempotency_key=f"{item.idempotency_key}#{index}",
                reply_to_message_id=item.reply_to if index == 0 else None,
                kind=item.kind,
            )
            try:
                receipt = await adapter.send(message)
                return receipt.platform_message_id
            except BadFormatError as exc:
                if plain_tried:
                    raise _GiveUp(f"rejected formatting even as plain text: {exc}") from exc
                text, plain_tried = plain_text(chunk), True
                continue
            except SendError as exc:
                self._hold_chat(item, exc)
                wait = await self._note(item, f"{exc.kind}: {exc}", exc.retry_after)
                if not exc.retryable or attempt >= self._settings.max_attempts:
                    raise _GiveUp(f"{exc.kind}: {exc}") from exc
            except Exception as exc:
                # The adapter boundary: an unexpected adapter bug counts as one failed attempt.
                _LOG.warning("adapter %s raised while sending", adapter.name, exc_info=True)
                wait = await self._note(item, f"unexpected: {exc!r}", None)
                if attempt >= self._settings.max_attempts:
                    raise _GiveUp(f"unexpected: {exc!r}") from exc
            await asyncio.sleep(wait if wait > 0 else self._backoff(attempt))
        raise _GiveUp("attempts exhausted")

    def _hold_chat(self, item: OutboxItem, exc: SendError) -> None:
        """The platform's ``retry_after`` silences the whole chat: stream edits and other rows wait too."""
        if exc.retry_after:
            self.budgets.hold(item.platform, item.chat_ref, exc.retry_after)

    async def _note(self, item: OutboxItem, error: str, retry_after: float | None) -> float:
        wait = retry_after if retry_after is not None else 0.0
        claim = self._settings.claim_s + wait
        await self.outbox.note_attempt(item.id, error, claim_s=claim)
        return wait

    def _backoff(self, attempt: int) -> float:
        return float(min(self._settings.backoff_initial_s * 2 ** (attempt - 1), self._settings.backoff_max_s))

    async def _give_up(self, item: OutboxItem, reason: str) -> None:
        _LOG.error("delivery of outbox row %d to %s failed for good: %s", item.id, item.platform, reason)
        self.failed += 1
        await self.outbox.mark_failed(item.id, reason)
        if self._on_failure is not None:
            self._on_failure(item.platform, reason)
