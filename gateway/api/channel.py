"""The OpenAI-compatible API's channel: platform "api", where each HTTP request waits for ITS answer.

Like any adapter, ``submit`` hands an ``InboundMessage`` to the gateway's sink, which returns once the
message is durably accepted (or refused: ``MessageRefusedError``, and nothing was stored), and ``send``
takes a delivered reply. ``ask`` is request/response on top: asks of one chat take turns (``ChatSequence``),
so what an ask ``prepare``s once its turn came (the text the model gets, from the stored conversation)
already sees the previous ask's answer; each ask waits for the delivery whose ``reply_to_message_id`` is
its own event id and whose kind is an answer — never another request's reply, and never a notice (nobody
reads those here: they are dropped). While an ask's turn runs in this process it is followed live
(``follow``, the ``LiveChannel`` of ``gateway.delivery``). Chat ids are never secrets: the HTTP layer
derives them from a keyed hash of the token (``gateway.identity.ClientKey``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable

from gateway.api.sequence import ChatSequence
from gateway.contracts import (
    Adapter,
    AdapterHealth,
    Capabilities,
    ChatKind,
    ChatRef,
    InboundSink,
    OutboundMessage,
    SendReceipt,
)
from gateway.sessions import KeyScope, SessionKey
from gateway.webchat import ReplyTimeoutError
from gateway.webchat.hand_off import ANSWER_KINDS, AwaitedReplies, hand_off

from .answer import Answer, LiveAnswer

API_CAPABILITIES = Capabilities(max_text_length=1_000_000)
"""One delivery is the whole answer: ``render`` never splits it."""
_LOG = logging.getLogger("mnemogate.api")

Prepare = Callable[[], Awaitable[str | None]]
"""Run once an ask's turn in its chat came, just before it is submitted: the text the model gets instead
of the message's own (None: the message itself)."""


class ApiChannel(Adapter):
    """The "api" platform of ``/v1``."""

    capabilities = API_CAPABILITIES

    def __init__(self, platform: str = "api") -> None:
        self.name = platform
        self._sink: InboundSink | None = None
        self._last_inbound_at: float | None = None
        self._last_send_at: float | None = None
        self._sequence = ChatSequence()
        self._awaited: dict[str, LiveAnswer] = {}
        self._unanswered = AwaitedReplies()

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink

    async def stop(self) -> None:
        self._sink = None
        for answer in list(self._awaited.values()):
            answer.settle(None)

    @property
    def started(self) -> bool:
        return self._sink is not None

    @property
    def asks_waiting(self) -> int:
        """Asks waiting for an earlier ask of their chat to be answered (for tests and metrics)."""
        return self._sequence.waiting

    def chat_ref(self, chat_id: str) -> ChatRef:
        return ChatRef(platform=self.name, chat_id=chat_id, kind=ChatKind.DM)

    def key_prefix(self, chat_id: str) -> str:
        """The session-key prefix of the conversations of ``chat_id`` (for reads of the stored ones)."""
        key = SessionKey(platform=self.name, scope=KeyScope.DM, chat_id=chat_id).to_string()
        return key.rsplit(":", 2)[0] + ":"

    async def submit(
        self, chat_id: str, text: str, client_message_id: str | None = None, *, model_text: str | None = None
    ) -> str:
        """Hand one message to the gateway (``hand_off``); returns the event id."""
        event_id = await hand_off(
            self._sink,
            self.chat_ref(chat_id),
            text,
            self._unanswered,
            client_message_id=client_message_id,
            model_text=model_text,
        )
        self._last_inbound_at = time.time()
        return event_id

    def awaited_replies(self) -> frozenset[str]:
        """The messages accepted here whose answer was not delivered here yet (their ``reply_to`` ids)."""
        return self._unanswered.ids()

    async def ask(
        self,
        chat_id: str,
        text: str,
        *,
        timeout: float,  # noqa: ASYNC109 - a deadline for the whole ask, waits included
        prepare: Prepare | None = None,
        live: bool = False,
    ) -> LiveAnswer:
        """Submit ``text`` once this chat's earlier asks are answered; its answer arrives on the result.

        The whole ask — its wait for earlier ones included — is bounded by ``timeout``; its slot in the
        chat is held until its answer arrives or the deadline passes, whatever the caller does meanwhile.
        ``live``: the answer also carries the reply's text as the turn streams it.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        slot = await self._sequence.enter(chat_id, timeout)
        if slot is None:
            raise ReplyTimeoutError(f"earlier requests of this conversation took over {timeout:g} s")
        client_id = secrets.token_hex(12)
        answer = LiveAnswer(f"{chat_id}:{client_id}", timeout, live=live)
        try:
            model_text = await prepare() if prepare is not None else None
            self._awaited[answer.event_id] = answer
            await self.submit(chat_id, text, client_id, model_text=model_text)
        except BaseException:
            self._awaited.pop(answer.event_id, None)
            slot.release()
            raise
        expiry = loop.call_at(deadline, answer.settle, None)

        def settled() -> None:
            expiry.cancel()
            self._awaited.pop(answer.event_id, None)
            slot.release()

        answer.when_settled(settled)
        return answer

    def follow(self, reply_to: str) -> LiveAnswer | None:
        answer = self._awaited.get(reply_to)
        return answer if answer is not None and not answer.settled else None

    async def send(self, message: OutboundMessage) -> SendReceipt:
        self._unanswered.delivered(message)
        answer = self._awaited.get(message.reply_to_message_id or "")
        if answer is not None and message.kind in ANSWER_KINDS:
            answer.settle(Answer(message.text, message.kind))
        else:
            _LOG.debug("api: a %s delivery that no request waits for was dropped", message.kind)
        self._last_send_at = time.time()
        return SendReceipt(platform_message_id=message.idempotency_key)

    def health(self) -> AdapterHealth:
        return AdapterHealth(
            connected=self.started,
            last_inbound_at=self._last_inbound_at,
            last_send_at=self._last_send_at,
            detail="" if self.started else "not started",
        )
