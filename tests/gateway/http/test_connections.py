"""Slow and idle clients against the real server: deadlines for headers and bodies, room made when full."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import pytest

from gateway.config import HttpSettings
from gateway.http import Readiness, create_app, serve_http
from tests.adapters.fakes.recording_sink import wait_until

_HALF_SENT = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
_HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@contextlib.asynccontextmanager
async def _serving(readiness: Readiness | None = None, **http: object) -> AsyncIterator[int]:
    app = create_app(readiness or Readiness({}), http=HttpSettings(**http))  # type: ignore[arg-type]
    async with serve_http(app, "127.0.0.1", 0) as server:
        yield int(server.servers[0].sockets[0].getsockname()[1])


@contextlib.asynccontextmanager
async def _connections(port: int, count: int) -> AsyncIterator[list[_Connection]]:
    opened: list[_Connection] = []
    try:
        for _ in range(count):
            opened.append(await asyncio.open_connection("127.0.0.1", port))
        yield opened
    finally:
        for _, writer in opened:
            writer.close()


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """True if the server closes the connection within ``seconds`` (whatever it sent first)."""
    try:
        await asyncio.wait_for(reader.read(), seconds)
    except TimeoutError:
        return False
    return True


async def _response(reader: asyncio.StreamReader) -> bytes:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    return head + await asyncio.wait_for(reader.readexactly(length), 5)


async def test_half_sent_headers_are_closed_after_the_header_timeout() -> None:
    async with _serving(header_timeout_s=0.5) as port, _connections(port, 1) as [(reader, writer)]:
        writer.write(_HALF_SENT)
        assert await _closed_within(reader, 5)


async def test_trickling_the_next_request_on_a_keep_alive_connection_does_not_extend_it() -> None:
    async with (
        _serving(header_timeout_s=1, keep_alive_s=1) as port,
        _connections(port, 1) as [(reader, writer)],
    ):
        writer.write(_HEALTHZ)
        assert (await _response(reader)).startswith(b"HTTP/1.1 200")
        closed = False
        for byte in _HALF_SENT[:25]:  # one byte every 0.2 s: 5 s in all, the deadline is 1 s
            writer.write(bytes([byte]))
            if await _closed_within(reader, 0.2):
                closed = True
                break
        assert closed


async def test_a_body_that_stops_arriving_is_cut_after_the_body_timeout_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    request = b"POST /api/anything HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n0123456789"
    async with _serving(body_timeout_s=0.5) as port, _connections(port, 1) as [(reader, writer)]:
        writer.write(request)
        assert await _closed_within(reader, 5)
    assert not [r for r in caplog.records if r.exc_info]


async def test_when_full_the_connection_waiting_longest_makes_room() -> None:
    async with _serving(max_connections=3) as port, _connections(port, 3) as slow:
        for _, writer in slow:
            writer.write(_HALF_SENT)
            await writer.drain()
        async with _connections(port, 1) as [(reader, writer)]:
            writer.write(_HEALTHZ)
            assert (await _response(reader)).startswith(b"HTTP/1.1 200")
        (oldest, _), *others = slow
        assert await _closed_within(oldest, 5)
        assert not any([await _closed_within(r, 0.2) for r, _ in others])


async def test_when_every_connection_is_busy_a_new_one_waits_for_room_instead_of_failing() -> None:
    release, running = asyncio.Event(), []

    async def slow_probe() -> str:
        running.append(1)
        await release.wait()
        return "ok"

    readiness = Readiness({"slow": slow_probe}, timeout=30)
    async with _serving(readiness, max_connections=2) as port, _connections(port, 2) as busy:
        for _, writer in busy:
            writer.write(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        await wait_until(lambda: len(running) == 2, 5.0, "both requests in the app")
        async with _connections(port, 1) as [(reader, writer)]:
            writer.write(_HEALTHZ)
            waiting = asyncio.create_task(_response(reader))
            done, _ = await asyncio.wait({waiting}, timeout=0.5)
            assert not done  # held in the listen backlog while both connections are busy
            release.set()
            assert (await waiting).startswith(b"HTTP/1.1 200")
        for busy_reader, _ in busy:
            assert (await _response(busy_reader)).startswith(b"HTTP/1.1 200")
