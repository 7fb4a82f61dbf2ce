"""Which fetched updates the gateway has durably accepted, so long polling confirms only those.

Telegram forgets an update once ``getUpdates`` is called with a higher ``offset``. PTB's Updater asks for
the next batch as soon as it has queued the previous one, which would confirm updates the gateway has not
stored yet (a crash then loses them). ``AcceptingBot`` holds each ``getUpdates`` until every earlier
fetched update was accepted, and lowers the offset to the first update whose hand-off failed so Telegram
delivers it again (the inbound ledger dedupes the re-delivered ones that did succeed).
Invariant: an update id is confirmed to Telegram only after the sink accepted it — a failed hand-off is
forgotten only once a ``getUpdates`` with the lowered offset reached Telegram (a call cancelled on its way,
as PTB does when polling stops, keeps it), and every start begins from what Telegram still holds (what an
earlier run left unresolved may have been confirmed by another process since).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence

from telegram import Update
from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import JSONDict, ODVInput, TimePeriod
from telegram.ext import ExtBot
from telegram.request import BaseRequest

_MAX_BACKOFF_S = 5.0


class AcceptanceLedger:
    """Fetched-but-unresolved update ids and failed hand-offs."""

    def __init__(self) -> None:
        self._outstanding: set[int] = set()
        self._failed: set[int] = set()
        self._changed = asyncio.Condition()
        self._backoff_s = 0.0
        self.stopping = False
        self.stop_grace_s = 5.0
        self.last_fetch_at: float | None = None

    def restart(self) -> None:
        """A new polling run: Telegram re-sends whatever is unconfirmed, so nothing earlier is waited for."""
        self._outstanding.clear()
        self._failed.clear()
        self._backoff_s = 0.0
        self.stopping = False

    def fetched(self, update_ids: Sequence[int]) -> None:
        """A ``getUpdates`` answered (possibly empty): the connection to Telegram works."""
        self.last_fetch_at = time.monotonic()
        self._outstanding.update(update_ids)

    async def resolve(self, update_id: int, *, accepted: bool) -> None:
        async with self._changed:
            self._outstanding.discard(update_id)
            if not accepted:
                self._failed.add(update_id)
            self._changed.notify_all()

    def _blocking(self, offset: int) -> bool:
        return any(update_id < offset for update_id in self._outstanding)

    async def confirmable_offset(self, requested: int | None) -> int | None:
        """Wait until every update below ``requested`` is resolved; the offset that is safe to send."""
        if requested is None:
            return None
        async with self._changed:
            if self.stopping:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self._changed.wait_for(lambda: not self._blocking(requested)), self.stop_grace_s
                    )
            else:
                await self._changed.wait_for(lambda: not self._blocking(requested))
            unsafe = self._failed | {u for u in self._outstanding if u < requested}
        if not unsafe:
            self._backoff_s = 0.0
            return requested
        # A failing sink (e.g. the database is down) must not turn polling into a hot loop.
        self._backoff_s = min(_MAX_BACKOFF_S, max(0.2, self._backoff_s * 2))
        if not self.stopping:
            await asyncio.sleep(self._backoff_s)
        return min(requested, min(unsafe))

    def sent(self, offset: int | None) -> None:
        """A ``getUpdates`` with ``offset`` reached Telegram: failed updates from there on are being
        delivered again (in this batch or a later one), so they are no longer this ledger's to hold."""
        if offset is not None:
            self._failed = {u for u in self._failed if u < offset}


class AcceptingBot(ExtBot[None]):
    """An ``ExtBot`` whose ``getUpdates`` confirms only updates the ledger says were accepted."""

    def __init__(
        self,
        token: str,
        *,
        base_url: str,
        base_file_url: str,
        request: BaseRequest,
        get_updates_request: BaseRequest,
        ledger: AcceptanceLedger,
    ) -> None:
        super().__init__(
            token,
            base_url=base_url,
            base_file_url=base_file_url,
            request=request,
            get_updates_request=get_updates_request,
        )
        self._ledger = ledger

    async def get_updates(
        self,
        offset: int | None = None,
        limit: int | None = None,
        timeout: TimePeriod | None = None,  # noqa: ASYNC109 - PTB's signature
        allowed_updates: Sequence[str] | None = None,
        *,
        read_timeout: ODVInput[float] = DEFAULT_NONE,
        write_timeout: ODVInput[float] = DEFAULT_NONE,
        connect_timeout: ODVInput[float] = DEFAULT_NONE,
        pool_timeout: ODVInput[float] = DEFAULT_NONE,
        api_kwargs: JSONDict | None = None,
    ) -> tuple[Update, ...]:
        safe_offset = await self._ledger.confirmable_offset(offset)
        updates = await super().get_updates(
            offset=safe_offset,
            limit=limit,
            timeout=timeout,
            allowed_updates=allowed_updates,
            read_timeout=read_timeout,
            write_timeout=write_timeout,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
            api_kwargs=api_kwargs,
        )
        self._ledger.sent(safe_offset)
        self._ledger.fetched([update.update_id for update in updates])
        return updates
