"""The pace of a background loop's retries: exponential delays, and a log that stays bounded while the
same failure repeats.

Invariants: the delay doubles from ``initial_s`` up to ``max_s`` and starts over after a success; at
most one warning is logged per ``log_every_s`` however the failures come (in one run or flapping), the
first of a run with its traceback and later ones as counts; a recovery is logged once, and only for a
run whose failure was logged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable


class RetryPacer:
    """Decides how long a failing loop waits and what it logs; safe to read from other threads."""

    def __init__(
        self,
        what: str,
        log: logging.Logger,
        *,
        initial_s: float,
        max_s: float,
        log_every_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._what = what
        self._log = log
        self._initial_s = initial_s
        self._max_s = max(max_s, initial_s)
        self._log_every_s = log_every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._unlogged = 0
        self._last_logged: float | None = None
        self._run_logged = False
        self.failures = 0

    @property
    def failing(self) -> bool:
        return self._consecutive > 0

    def failed(self, exc: BaseException) -> float:
        """Record one failure, logging it if its turn has come; returns the seconds to wait to retry."""
        with self._lock:
            self.failures += 1
            self._consecutive += 1
            delay = min(self._max_s, self._initial_s * 2.0 ** (self._consecutive - 1))
            now = self._clock()
            if self._last_logged is not None and now - self._last_logged < self._log_every_s:
                self._unlogged += 1
                return delay
            unreported = f" ({self._unlogged} more since the last report)" if self._unlogged else ""
            if self._consecutive == 1:
                self._log.warning(
                    "%s failed%s; retrying in %.2g s", self._what, unreported, delay, exc_info=exc
                )
            else:
                self._log.warning(
                    "%s still failing: %d failures in a row%s, latest %s: %s; retrying in %.2g s",
                    self._what,
                    self._consecutive,
                    unreported,
                    type(exc).__name__,
                    exc,
                    delay,
                )
            self._last_logged = now
            self._unlogged = 0
            self._run_logged = True
            return delay

    def succeeded(self) -> None:
        """Record that the loop works again; the next failure starts a new run of delays."""
        if self._consecutive == 0:
            return
        with self._lock:
            if self._run_logged:
                self._log.info("%s recovered after %d failures", self._what, self._consecutive)
            self._consecutive = 0
            self._run_logged = False
