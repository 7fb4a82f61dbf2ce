"""Readiness: named component probes run concurrently with a timeout, reported per component.

A probe returns "ok" or a short reason; one that raises or times out is reported as not ready with its
error, never crashing ``/readyz``. "ok (…)" is a degraded component that does not stop turns (search
being rebuilt, a failing memory provider). The store probes take the ``StoreHealth`` port, never a backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

from agent_core.storage import SearchHealth, StateError, StoreHealth
from gateway.contracts import Adapter

ReadinessCheck = Callable[[], Awaitable[dict[str, str]]]
Probe = Callable[[], Awaitable[str]]


class Readiness:
    """A ``ReadinessCheck`` built from named probes (db writable, adapters connected, workers alive)."""

    def __init__(self, probes: Mapping[str, Probe], *, timeout: float = 2.0) -> None:
        self._probes = dict(probes)
        self._timeout = timeout

    async def __call__(self) -> dict[str, str]:
        names = list(self._probes)
        results = await asyncio.gather(*(self._run(self._probes[name]) for name in names))
        return dict(zip(names, results, strict=True))

    async def _run(self, probe: Probe) -> str:
        try:
            return await asyncio.wait_for(probe(), self._timeout)
        except TimeoutError:
            return f"no answer within {self._timeout:g} s"
        except Exception as exc:  # a failing probe is a "not ready" report, not a 500
            return f"error: {type(exc).__name__}: {exc}"


def adapters_probe(adapters: Sequence[Adapter]) -> Probe:
    """ "ok" when every adapter reports connected (or stands by for another process that runs it), else the
    names and details of those that are not."""

    async def probe() -> str:
        down = [
            f"{a.name} ({h.detail or 'disconnected'})"
            for a in adapters
            if not (h := a.health()).connected and not h.standby
        ]
        return "ok" if not down else "not connected: " + ", ".join(down)

    return probe


def state_probe(store: StoreHealth) -> Probe:
    """ "ok" while state.db can be read and written; not ready once reads fail or found it damaged."""

    async def probe() -> str:
        try:
            await store.check_readable()
            await store.check_writable()
        except StateError as exc:
            return f"unavailable: {exc}"
        return "ok"

    return probe


def search_probe(store: StoreHealth) -> Probe:
    """ "ok", or "ok (search …)" while the index is missing or being rebuilt: search degrades, turns go on."""

    async def probe() -> str:
        try:
            health = await store.search_health()
        except StateError as exc:
            return f"ok (search unknown: {exc})"
        return describe_search(health)

    return probe


def describe_search(health: SearchHealth) -> str:
    if health.state == "unavailable":
        return f"ok (search unavailable until its index is rebuilt: {health.detail})"
    if health.state == "rebuilding":
        return f"ok (search rebuilding: indexed up to message {health.indexed_up_to:,} of {health.newest:,})"
    return "ok"
