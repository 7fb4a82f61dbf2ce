"""TelegramAdapter: python-telegram-bot 22 in long-polling or webhook mode, translating only.

Invariants: pending updates are never dropped (``drop_pending_updates=False``, also on a cold start); an
update is confirmed to Telegram only after the sink accepted it (polling: ``AcceptingBot``; webhook: the
HTTP answer is sent after the sink returned, so Telegram re-delivers on failure); ``start`` and ``stop``
are mirror images on PTB's lifecycle (initialize/start/updater.start_polling, then updater.stop/stop/
shutdown), and no message reaches the sink after ``stop`` returns; the token is never logged.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from telegram import ReplyParameters, Update
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, InvalidToken, TelegramError
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler
from telegram.request import HTTPXRequest

from adapters.telegram.acceptance import AcceptanceLedger, AcceptingBot
from adapters.telegram.config import TelegramSettings
from adapters.telegram.convert import BotIdentity, update_to_inbound
from adapters.telegram.render import TELEGRAM_LIMIT, render_telegram
from adapters.telegram.send_errors import send_error
from gateway.contracts import (
    Adapter,
    AdapterConfigError,
    AdapterError,
    AdapterHealth,
    Capabilities,
    ChatRef,
    HttpRoute,
    InboundSink,
    OutboundMessage,
    SendReceipt,
)

_LOG = logging.getLogger("mnemogate.adapters.telegram")
# httpx logs every request URL at INFO and PTB at DEBUG; Bot API URLs contain the token.
_TOKEN_LEAKING_LOGGERS = ("httpx", "httpcore", "telegram")
_PLAIN_MEMORY = 1024

TELEGRAM_CAPABILITIES = Capabilities(
    max_text_length=TELEGRAM_LIMIT,
    length_unit="utf16",
    max_edit_length=TELEGRAM_LIMIT,
    can_edit=True,
    can_thread=True,
    can_typing=True,
)

TelegramApp = Application[Any, Any, Any, Any, Any, Any]


def silence_token_loggers() -> None:
    for name in _TOKEN_LEAKING_LOGGERS:
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.WARNING:
            logger.setLevel(logging.WARNING)


class TelegramAdapter(Adapter):
    """One bot account on the Telegram Bot API."""

    name = "telegram"
    capabilities = TELEGRAM_CAPABILITIES

    @property
    def holds_connection(self) -> bool:
        return self._settings.mode == "polling"

    def __init__(self, settings: TelegramSettings, *, clock: Callable[[], float] = time.time) -> None:
        self._settings = settings.checked()
        self._token = settings.token.get_secret_value()
        self._clock = clock
        self._ledger = AcceptanceLedger()
        self._ledger.stop_grace_s = settings.stop_grace_s
        self._app: TelegramApp | None = None
        self._sink: InboundSink | None = None
        self._identity: BotIdentity | None = None
        self._free_response = frozenset(settings.free_response_chats)
        self._connected = False
        self._last_poll_error_at: float | None = None
        self._detail = "not started"
        self._poll_error = ""
        self._last_inbound: float | None = None
        self._last_send: float | None = None
        # Chunks delivery re-sends as plain text after a BadFormatError share the idempotency key.
        self._plain_keys: OrderedDict[str, None] = OrderedDict()

    # -- lifecycle -------------------------------------------------------------------------------------

    def _build(self) -> TelegramApp:
        timeout = self._settings.request_timeout_s
        bot = AcceptingBot(
            self._token,
            base_url=self._settings.api_base_url,
            base_file_url=self._settings.file_base_url,
            request=HTTPXRequest(connection_pool_size=16, read_timeout=timeout, connect_timeout=timeout),
            get_updates_request=HTTPXRequest(read_timeout=self._settings.poll_timeout_s + timeout),
            ledger=self._ledger,
        )
        builder = ApplicationBuilder().bot(bot)
        if self._settings.mode == "webhook":
            builder = builder.updater(None)
        app: TelegramApp = builder.build()
        app.add_handler(TypeHandler(Update, self._on_polled_update))
        return app

    async def start(self, sink: InboundSink) -> None:
        if self._app is not None:
            raise AdapterError("telegram adapter already started")
        silence_token_loggers()
        self._sink = sink
        self._ledger.restart()  # a retried start after a failed one takes updates again
        app = self._build()
        try:
            await app.initialize()
        except TelegramError as exc:
            await app.shutdown()
            if isinstance(exc, InvalidToken):
                raise AdapterConfigError(
                    "telegram rejected the bot token (check TELEGRAM_BOT_TOKEN)"
                ) from exc
            raise AdapterError(f"telegram is unreachable: {send_error(exc, self._token)}") from exc
        me = app.bot.bot
        self._identity = BotIdentity(me.id, self._settings.bot_username or me.username)
        self._app = app
        await app.start()
        if self._settings.mode == "polling" and app.updater is not None:
            await app.updater.start_polling(
                poll_interval=self._settings.poll_interval_s,
                timeout=self._settings.poll_timeout_s,
                drop_pending_updates=False,
                allowed_updates=["message"],
                error_callback=self._on_poll_error,
            )
        elif self._settings.webhook_url:
            try:
                await app.bot.set_webhook(
                    self._settings.webhook_url,
                    secret_token=self._secret(),
                    allowed_updates=["message"],
                    drop_pending_updates=False,
                )
            except TelegramError as exc:  # the caller stops the half-started app before any retry
                raise AdapterError(f"telegram refused the webhook: {send_error(exc, self._token)}") from exc
        self._connected, self._detail = True, f"{self._settings.mode} as @{self._identity.username}"
        _LOG.info("telegram adapter started (%s)", self._detail)

    async def stop(self) -> None:
        app, self._app = self._app, None
        if app is None:
            return
        self._ledger.stopping = True
        try:
            if app.updater is not None and app.updater.running:
                await app.updater.stop()
            if app.running:
                await app.stop()
        finally:
            await app.shutdown()
            self._sink = None
            self._connected, self._detail = False, "stopped"

    # -- inbound ---------------------------------------------------------------------------------------

    def _on_poll_error(self, error: TelegramError) -> None:
        # PTB's polling loop retries with backoff; health shows the outage until a poll succeeds again.
        self._last_poll_error_at = time.monotonic()
        self._poll_error = f"polling failed, retrying: {send_error(error, self._token)}"
        _LOG.warning("telegram %s", self._poll_error)

    def _polling_ok(self) -> bool:
        error_at, fetch_at = self._last_poll_error_at, self._ledger.last_fetch_at
        return error_at is None or (fetch_at is not None and fetch_at > error_at)

    async def _on_polled_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        accepted = await self._deliver(update)
        await self._ledger.resolve(update.update_id, accepted=accepted)

    async def _deliver(self, update: Update) -> bool:
        """Hand one update to the sink; False when it could not be accepted (Telegram must re-send it)."""
        identity, sink = self._identity, self._sink
        if identity is None or sink is None:
            return False
        message = update_to_inbound(update, identity, self._free_response)
        if message is None:
            return True
        try:
            await sink(message)
        except Exception:
            # The adapter boundary: the gateway failed to store it; leave it unconfirmed for a re-delivery.
            _LOG.warning(
                "telegram update %s was not accepted by the gateway", update.update_id, exc_info=True
            )
            return False
        self._last_inbound = self._clock()
        return True

    # -- webhook ---------------------------------------------------------------------------------------

    def _secret(self) -> str:
        secret = self._settings.webhook_secret
        return secret.get_secret_value() if secret else ""

    def http_routes(self) -> Sequence[HttpRoute]:
        if self._settings.mode != "webhook":
            return ()
        return (HttpRoute(self._settings.webhook_path, ("POST",), self.handle_webhook),)

    async def handle_webhook(self, request: Request) -> Response:
        """Telegram's webhook POST: check the secret in constant time, accept the update, then answer."""
        given = request.headers.get("x-telegram-bot-api-secret-token", "")
        if not hmac.compare_digest(given.encode(), self._secret().encode()):
            return JSONResponse({"ok": False, "description": "bad secret token"}, status_code=403)
        app = self._app
        if app is None:
            return JSONResponse({"ok": False, "description": "not running"}, status_code=503)
        try:
            update = Update.de_json(await request.json(), app.bot)
        except (ValueError, TypeError, KeyError):
            return JSONResponse({"ok": False, "description": "malformed update"}, status_code=400)
        if not await self._deliver(update):
            return JSONResponse({"ok": False, "description": "not accepted, retry"}, status_code=503)
        return JSONResponse({"ok": True})

    # -- outbound --------------------------------------------------------------------------------------

    def _running_app(self) -> TelegramApp:
        if self._app is None:
            raise AdapterError("telegram adapter is not running")
        return self._app

    def _parse_mode(self, idempotency_key: str) -> str | None:
        return None if idempotency_key in self._plain_keys else ParseMode.HTML

    def _remember_plain(self, idempotency_key: str) -> None:
        self._plain_keys[idempotency_key] = None
        while len(self._plain_keys) > _PLAIN_MEMORY:
            self._plain_keys.popitem(last=False)

    async def send(self, message: OutboundMessage) -> SendReceipt:
        bot = self._running_app().bot
        chat = message.chat
        reply = (
            ReplyParameters(int(message.reply_to_message_id), allow_sending_without_reply=True)
            if message.reply_to_message_id
            else None
        )
        try:
            sent = await bot.send_message(
                chat_id=int(chat.chat_id),
                text=message.text,
                parse_mode=self._parse_mode(message.idempotency_key),
                message_thread_id=int(chat.thread_id) if chat.thread_id else None,
                reply_parameters=reply,
            )
        except TelegramError as exc:
            error = send_error(exc, self._token)
            if error.kind == "bad_format":
                self._remember_plain(message.idempotency_key)
            raise error from exc
        self._last_send = self._clock()
        return SendReceipt(str(sent.message_id))

    async def edit(self, chat: ChatRef, platform_message_id: str, text: str) -> None:
        bot = self._running_app().bot
        try:
            await bot.edit_message_text(
                text,
                chat_id=int(chat.chat_id),
                message_id=int(platform_message_id),
                parse_mode=ParseMode.HTML,
            )
        except BadRequest as exc:
            if "not modified" not in str(exc).lower():
                raise send_error(exc, self._token) from exc
        except TelegramError as exc:
            raise send_error(exc, self._token) from exc
        self._last_send = self._clock()

    async def typing(self, chat: ChatRef) -> None:
        bot = self._running_app().bot
        try:
            await bot.send_chat_action(
                int(chat.chat_id),
                ChatAction.TYPING,
                message_thread_id=int(chat.thread_id) if chat.thread_id else None,
            )
        except TelegramError as exc:
            raise send_error(exc, self._token) from exc

    def render(self, markdown: str) -> Sequence[str]:
        return render_telegram(markdown)

    def health(self) -> AdapterHealth:
        polling_ok = self._settings.mode != "polling" or self._polling_ok()
        return AdapterHealth(
            connected=self._app is not None and self._connected and polling_ok,
            last_inbound_at=self._last_inbound,
            last_send_at=self._last_send,
            detail=self._detail if polling_ok else self._poll_error,
        )
