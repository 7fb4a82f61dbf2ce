"""SlackAdapter: slack-bolt ``AsyncApp`` over the Events API (our route) or Socket Mode; translating only.

Invariants: an events request is verified with the signing secret (Bolt answers 401 otherwise) and acked
only after the sink (the gateway's durable enqueue) accepted it, so nothing Slack was told is stored can
be lost — a failed hand-off gets an error answer and Slack redelivers; retried deliveries of an ``event_id``
already accepted are dropped here and by the gateway's ledger; the bot's own messages never reach the sink;
a top-level mention is answered in a thread under it; the threads the bot was mentioned or answered in are
remembered (``ThreadMemory``, across restarts when the gateway offers checkpoints), so a plain reply there
is addressed to it; chunks are at most 4,000 characters and an edit longer than that is refused; ``start``
and ``stop`` are mirror images, and no message reaches the sink after ``stop`` returns; tokens are never
logged.
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from adapters.slack.config import SlackSettings
from adapters.slack.convert import BotIdentity, event_to_inbound, thread_key
from adapters.slack.render import SLACK_CHUNK_LIMIT, render_slack
from adapters.slack.send_errors import network_error, send_error
from adapters.slack.threads import DAY_S, ThreadMemory
from gateway.contracts import (
    Adapter,
    AdapterConfigError,
    AdapterError,
    AdapterHealth,
    Capabilities,
    ChatKind,
    ChatRef,
    Checkpoints,
    HttpRoute,
    InboundSink,
    OutboundMessage,
    SendError,
    SendReceipt,
)

_LOG = logging.getLogger("mnemogate.adapters.slack")
_QUIET_LOGGERS = ("slack_sdk", "slack_bolt")
_REMEMBERED = 5000
_NETWORK_ERRORS = (aiohttp.ClientError, TimeoutError)

SLACK_CAPABILITIES = Capabilities(
    max_text_length=SLACK_CHUNK_LIMIT,
    length_unit="chars",
    max_edit_length=SLACK_CHUNK_LIMIT,
    can_edit=True,
    can_thread=True,
    can_typing=False,
)


class _Recent:
    """A bounded insertion-ordered set (oldest forgotten first)."""

    def __init__(self, size: int = _REMEMBERED) -> None:
        self._items: OrderedDict[Any, None] = OrderedDict()
        self._size = size

    def add(self, item: Any) -> None:
        self._items[item] = None
        self._items.move_to_end(item)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __contains__(self, item: object) -> bool:
        return item in self._items


class SlackAdapter(Adapter):
    """One Slack app (bot user) in one or more workspaces."""

    name = "slack"
    capabilities = SLACK_CAPABILITIES

    @property
    def holds_connection(self) -> bool:
        return self._settings.mode == "socket"

    def __init__(self, settings: SlackSettings, *, clock: Callable[[], float] = time.time) -> None:
        self._settings = settings.checked()
        self._clock = clock
        self._app: AsyncApp | None = None
        self._http: AsyncSlackRequestHandler | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._clients: dict[str, AsyncWebClient] = {}
        self._identity: BotIdentity | None = None
        self._sink: InboundSink | None = None
        self._accepted = _Recent()
        self._threads = ThreadMemory(window_s=self._settings.thread_memory_days * DAY_S, clock=clock)
        self._detail = "not started"
        self._last_inbound: float | None = None
        self._last_send: float | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    def _client(self, token: str) -> AsyncWebClient:
        return AsyncWebClient(
            token=token, base_url=self._settings.api_base_url, timeout=self._settings.request_timeout_s
        )

    def _build(self, client: AsyncWebClient) -> AsyncApp:
        http = self._settings.mode == "http"
        secret = self._settings.signing_secret
        app = AsyncApp(
            client=client,
            signing_secret=secret.get_secret_value() if http and secret else "",
            request_verification_enabled=http,
            # The listener (the gateway's durable enqueue, milliseconds) runs before Slack gets its answer:
            # a delivery is acked only once stored, and an error answer makes Slack redeliver it.
            process_before_response=True,
            # Keeps Bolt from swapping in its assistant-thread helpers (they fetch conversations.replies).
            attaching_conversation_kwargs_enabled=False,
            logger=logging.getLogger("mnemogate.adapters.slack.bolt"),
        )
        app.event("message")(self._on_event)
        app.event("app_mention")(self._on_event)
        # Bolt answers 404 to unhandled events and Slack then retries them; ack every other event.
        app.event(re.compile(".*"))(self._ignore_event)
        return app

    def use_checkpoints(self, checkpoints: Checkpoints) -> None:
        self._threads.use(checkpoints)

    async def start(self, sink: InboundSink) -> None:
        if self._app is not None:
            raise AdapterError("slack adapter already started")
        for name in _QUIET_LOGGERS:
            logger = logging.getLogger(name)
            if logger.getEffectiveLevel() < logging.WARNING:
                logger.setLevel(logging.WARNING)
        client = self._client(self._settings.bot_token.get_secret_value())
        try:
            me = await client.auth_test()
        except SlackApiError as exc:
            raise AdapterConfigError(
                f"slack rejected the bot token (check SLACK_BOT_TOKEN): {exc.response.get('error')}"
            ) from exc
        except _NETWORK_ERRORS as exc:
            raise AdapterError(f"slack is unreachable: {type(exc).__name__}") from exc
        self._identity = BotIdentity(str(me["user_id"]), me.get("bot_id"))
        self._clients = {str(me.get("team_id") or ""): client}
        for team, token in self._settings.team_tokens.items():
            self._clients[team] = self._client(token.get_secret_value())
        await self._threads.load()
        self._sink = sink
        app = self._build(client)
        self._app = app
        if self._settings.mode == "socket" and self._settings.app_token is not None:
            self._socket = AsyncSocketModeHandler(app, self._settings.app_token.get_secret_value())
            await self._socket.connect_async()  # type: ignore[no-untyped-call]
        else:
            self._http = AsyncSlackRequestHandler(app)
        self._detail = f"{self._settings.mode} as {me.get('user')} in {me.get('team')}"
        _LOG.info("slack adapter started (%s)", self._detail)

    async def stop(self) -> None:
        app, self._app = self._app, None
        if app is None:
            return
        self._sink = None
        socket, self._socket, self._http = self._socket, None, None
        if socket is not None:
            await socket.close_async()  # type: ignore[no-untyped-call]
        await self._threads.flush()
        self._detail = "stopped"

    # -- inbound ---------------------------------------------------------------------------------------

    async def _ignore_event(self, body: dict[str, Any]) -> None:
        return None

    async def _on_event(self, body: dict[str, Any]) -> None:
        identity, event_id = self._identity, str(body.get("event_id", ""))
        if identity is None or (event_id and event_id in self._accepted):
            return
        message = event_to_inbound(
            body, identity, joined_threads=self._threads, reply_in_thread=self._settings.reply_in_thread
        )
        sink = self._sink
        if message is None or sink is None:
            return
        try:
            await sink(message)
        except Exception:
            # The adapter boundary: Slack gets an error answer and redelivers; the ledger dedupes.
            _LOG.error("slack event %s was not accepted by the gateway", event_id, exc_info=True)
            raise
        self._accepted.add(event_id)
        if message.mentions_bot and (key := thread_key(message.chat)) is not None:
            self._threads.join(key, message.message_id or "")
        self._last_inbound = self._clock()

    def http_routes(self) -> Sequence[HttpRoute]:
        if self._settings.mode != "http":
            return ()
        return (HttpRoute(self._settings.events_path, ("POST",), self.handle_events),)

    async def handle_events(self, request: Request) -> Response:
        """Slack's Events API POST: Bolt verifies the signature, acks, then runs the listener."""
        handler = self._http
        if handler is None:
            return JSONResponse({"ok": False, "error": "not running"}, status_code=503)
        return await handler.handle(request)

    # -- outbound --------------------------------------------------------------------------------------

    def _client_for(self, chat: ChatRef) -> AsyncWebClient:
        if self._app is None or self._identity is None:
            raise AdapterError("slack adapter is not running")
        client = self._clients.get(chat.workspace or "")
        return client if client is not None else next(iter(self._clients.values()))

    def _thread_ts(self, message: OutboundMessage) -> str | None:
        chat = message.chat
        if chat.thread_id:
            return chat.thread_id
        if self._settings.reply_in_thread and chat.kind is not ChatKind.DM:
            return message.reply_to_message_id
        return None

    async def send(self, message: OutboundMessage) -> SendReceipt:
        client = self._client_for(message.chat)
        thread_ts = self._thread_ts(message)
        try:
            answer = await client.chat_postMessage(
                channel=message.chat.chat_id, text=message.text, thread_ts=thread_ts, mrkdwn=True
            )
        except SlackApiError as exc:
            raise send_error(exc, "chat.postMessage") from exc
        except _NETWORK_ERRORS as exc:
            raise network_error(exc, "chat.postMessage") from exc
        if thread_ts is not None:
            self._threads.join(
                (message.chat.workspace or "", message.chat.chat_id, thread_ts), str(answer["ts"])
            )
        self._last_send = self._clock()
        return SendReceipt(str(answer["ts"]))

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        if not self.capabilities.fits(text, edit=True):
            raise SendError(
                "slack chat.update takes at most 4,000 characters", retryable=False, kind="too_long"
            )
        client = self._client_for(chat)
        try:
            await client.chat_update(channel=chat.chat_id, ts=platform_message_id, text=text)
        except SlackApiError as exc:
            raise send_error(exc, "chat.update") from exc
        except _NETWORK_ERRORS as exc:
            raise network_error(exc, "chat.update") from exc
        self._last_send = self._clock()

    def render(self, markdown: str) -> Sequence[str]:
        return render_slack(markdown)

    def health(self) -> AdapterHealth:
        connected = self._app is not None
        if self._socket is not None:
            client = self._socket.client
            session = client.current_session
            # Socket Mode reconnects by itself; health shows the gap while the websocket is down.
            connected = connected and not client.closed and session is not None and not session.closed
        return AdapterHealth(
            connected=connected,
            last_inbound_at=self._last_inbound,
            last_send_at=self._last_send,
            detail=self._detail,
        )
