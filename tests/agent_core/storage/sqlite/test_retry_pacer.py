"""Retry pacing of background loops: delays that grow to a cap, and at most one warning a minute."""

from __future__ import annotations

import logging

import pytest

from agent_core.storage.sqlite.retry_pacer import RetryPacer


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _pacer(clock: _Clock) -> RetryPacer:
    return RetryPacer("indexer", logging.getLogger("test.pacer"), initial_s=0.05, max_s=10.0, clock=clock)


def test_delays_double_up_to_the_cap_and_start_over_after_a_success() -> None:
    pacer = _pacer(_Clock())
    delays = [pacer.failed(OSError("disk")) for _ in range(12)]
    assert delays[:4] == [0.05, 0.1, 0.2, 0.4] and delays[-1] == 10.0 and max(delays) == 10.0
    pacer.succeeded()
    assert pacer.failed(OSError("disk")) == 0.05 and pacer.failures == 13


def test_a_repeating_failure_logs_once_a_minute_with_one_traceback(caplog: pytest.LogCaptureFixture) -> None:
    clock = _Clock()
    pacer = _pacer(clock)
    with caplog.at_level(logging.INFO, logger="test.pacer"):
        for _ in range(600):  # ten minutes of a failure every second
            pacer.failed(OSError("disk I/O error"))
            clock.now += 1.0
        pacer.succeeded()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 10
    assert warnings[0].exc_info is not None and all(r.exc_info is None for r in warnings[1:])
    assert "59 more since the last report" in warnings[1].getMessage()
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.INFO] == [
        "indexer recovered after 600 failures"
    ]


def test_a_flapping_failure_is_also_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    clock = _Clock()
    pacer = _pacer(clock)
    with caplog.at_level(logging.INFO, logger="test.pacer"):
        for _ in range(100):
            pacer.failed(OSError("flap"))
            pacer.succeeded()
            clock.now += 0.1
    assert len(caplog.records) == 2  # the first failure and its recovery; ten seconds in all
