"""The adapter-lease port: which process runs a polling or socket adapter now, one holder at a time.

Invariants every backend keeps: at most one holder per adapter whose lease has not expired; a claim by the
holder renews it, a claim by anyone else succeeds only once the lease has expired (or was released); every
time is the backend's clock (the database server's on PostgreSQL), so callers pass durations, never
timestamps, and hosts whose clocks disagree still agree on who holds what; ``generation`` starts at 1 and
grows by one with every change of holder (a renewal keeps it), so a stale owner can tell it was replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class LeaseState:
    """An adapter's lease as one claim left it, seen from the claimant.

    ``held``: the claimant holds it now (acquired or renewed). Otherwise ``holder``/``host`` name who does,
    or did last (a released or expired lease nobody took yet still names its last holder).
    ``expires_in_s``: how long the lease lasts from the backend's "now" of the claim (negative: expired).
    """

    adapter: str
    held: bool
    holder: str
    host: str
    expires_in_s: float
    generation: int


@dataclass(frozen=True, slots=True)
class AdapterOwner:
    """One adapter's lease as stored: its holder and host, until when, and whether it is live now.

    ``expires_at`` is epoch seconds on the backend's clock (for display); ``expires_in_s`` is measured
    against that same clock when it was read, so callers never compare it with their own clock.
    """

    adapter: str
    holder: str
    host: str
    acquired_at: float
    expires_at: float
    expires_in_s: float
    generation: int

    @property
    def live(self) -> bool:
        """The lease had not expired (nor been released) when it was read."""
        return self.expires_in_s > 0


class AdapterLeaseRepository(Protocol):
    """Leases of adapters that must run in one process at a time; each call is its own transaction."""

    async def claim(self, adapter: str, holder: str, host: str, lease_s: float) -> LeaseState:
        """Acquire ``adapter``'s lease for ``lease_s`` seconds, or renew it if ``holder`` holds it already.

        One transaction: a lease held by another live holder is left alone and described (``held`` False);
        otherwise ``holder`` holds it until now + ``lease_s`` (``generation`` + 1 when the holder changed).
        """
        ...

    async def release(self, adapter: str, holder: str) -> bool:
        """End ``holder``'s lease at once so another process may claim it now; False if it held none."""
        ...

    async def owners(self) -> list[AdapterOwner]:
        """Every adapter's lease as stored (live or not), by adapter name."""
        ...
