"""Where one discord.py client's REST calls and first gateway connection go when not to Discord itself.

Invariants: discord.py has no per-client base URL (``Route.BASE`` and ``DiscordWebSocket.DEFAULT_GATEWAY``
are class attributes), so ``RebasedHTTPClient`` rewrites the URLs of its own client only and never touches
those process-wide attributes; a resume URL Discord handed out in READY is left as it is.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import discord.gateway
import discord.http
import yarl

DISCORD_API = "https://discord.com/api/v10"
DISCORD_GATEWAY = "wss://gateway.discord.gg/"


class RebasedHTTPClient(discord.http.HTTPClient):
    """discord.py's HTTP client with REST under ``api_base``, the default gateway swapped for ``gateway``."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        api_base: str,
        gateway: str,
        max_ratelimit_timeout: float | None,
    ) -> None:
        super().__init__(loop, max_ratelimit_timeout=max_ratelimit_timeout)
        self._api_base = api_base.rstrip("/")
        self._gateway = yarl.URL(gateway)

    async def request(self, route: discord.http.Route, **kwargs: Any) -> Any:
        base = discord.http.Route.BASE
        if route.url.startswith(base):
            route.url = self._api_base + route.url[len(base) :]
        return await super().request(route, **kwargs)

    async def ws_connect(self, url: str, *, compress: int = 0) -> aiohttp.ClientWebSocketResponse:
        target = yarl.URL(url)
        default = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
        if (target.scheme, target.host) == (default.scheme, default.host):
            url = str(self._gateway.with_query(target.query))
        return await super().ws_connect(url, compress=compress)
