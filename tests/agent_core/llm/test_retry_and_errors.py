"""The retry policy (attempt cap, budget, retry-after, first-event rule) and error classification."""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncGenerator

import pytest

from agent_core.llm import (
    LLMAuthError,
    LLMBadRequestError,
    LLMError,
    LLMEvent,
    LLMQuotaError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
    StopEvent,
    TextDelta,
)
from agent_core.llm.errors import error_for_status
from agent_core.llm.retry import RetryPolicy, parse_retry_after, stream_with_retries

FAST = RetryPolicy(max_attempts=4, budget_s=5.0, backoff_initial_s=0.01, backoff_max_s=0.02)


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "0.2"}) == 0.2
    assert parse_retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    assert parse_retry_after({"retry-after": "-3"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 3, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(3.0)


class Flaky:
    """Opens attempts that fail with ``errors`` in turn, then stream two deltas."""

    def __init__(self, *errors: LLMError, fail_after_first_event: LLMError | None = None) -> None:
        self.errors = list(errors)
        self.fail_after_first_event = fail_after_first_event
        self.attempts = 0

    async def attempt(self) -> AsyncGenerator[LLMEvent, None]:
        self.attempts += 1
        if self.errors:
            raise self.errors.pop(0)
        yield TextDelta("hello ")
        if self.fail_after_first_event is not None:
            raise self.fail_after_first_event
        yield TextDelta("world")
        yield StopEvent("end_turn")


async def drain(policy: RetryPolicy, flaky: Flaky) -> list[LLMEvent]:
    return [event async for event in stream_with_retries(policy, flaky.attempt)]


async def test_transient_failures_are_retried_until_success() -> None:
    flaky = Flaky(LLMServerError(), LLMRateLimitError(), LLMTimeoutError())
    events = await drain(FAST, flaky)
    assert events == [TextDelta("hello "), TextDelta("world"), StopEvent("end_turn")]
    assert flaky.attempts == 4


async def test_attempts_never_exceed_the_cap() -> None:
    flaky = Flaky(*[LLMServerError() for _ in range(10)])
    with pytest.raises(LLMServerError):
        await drain(FAST, flaky)
    assert flaky.attempts == 4


async def test_permanent_failures_are_not_retried() -> None:
    for error in (LLMAuthError(), LLMQuotaError(), LLMBadRequestError()):
        flaky = Flaky(error)
        with pytest.raises(type(error)):
            await drain(FAST, flaky)
        assert flaky.attempts == 1


async def test_no_retry_once_an_event_was_yielded() -> None:
    flaky = Flaky(fail_after_first_event=LLMServerError())
    seen: list[LLMEvent] = []
    with pytest.raises(LLMServerError):
        async for event in stream_with_retries(FAST, flaky.attempt):
            seen.append(event)
    assert seen == [TextDelta("hello ")]
    assert flaky.attempts == 1


async def test_retry_after_is_capped() -> None:
    policy = RetryPolicy(max_attempts=2, budget_s=5.0, retry_after_cap_s=0.05)
    flaky = Flaky(LLMRateLimitError(retry_after=60.0))
    started = time.monotonic()
    await drain(policy, flaky)
    assert time.monotonic() - started < 1.0
    assert flaky.attempts == 2


async def test_the_time_budget_stops_retries_before_the_attempt_cap() -> None:
    policy = RetryPolicy(max_attempts=10, budget_s=0.3, backoff_initial_s=0.1, backoff_max_s=0.1)
    flaky = Flaky(*[LLMServerError() for _ in range(10)])
    with pytest.raises(LLMServerError):
        await drain(policy, flaky)
    assert 2 <= flaky.attempts <= 3


@pytest.mark.parametrize(
    ("status", "kind", "detail", "expected"),
    [
        (401, "authentication_error", "invalid x-api-key", LLMAuthError),
        (403, "permission_error", "", LLMAuthError),
        (402, None, "Insufficient credits", LLMQuotaError),
        (400, "invalid_request_error", "Your credit balance is too low", LLMQuotaError),
        (429, "insufficient_quota", "You exceeded your current quota", LLMQuotaError),
        (429, "rate_limit_error", "Quota exceeded per minute", LLMRateLimitError),
        (408, None, "", LLMTimeoutError),
        (500, "api_error", "", LLMServerError),
        (529, "overloaded_error", "", LLMServerError),
        (200, "overloaded_error", "mid-stream", LLMServerError),
        (None, "something_new", "stream broke", LLMServerError),
        (400, "invalid_request_error", "bad field", LLMBadRequestError),
        (413, "request_too_large", "", LLMBadRequestError),
    ],
)
def test_error_classification(status: int | None, kind: str | None, detail: str, expected: type) -> None:
    error = error_for_status(status, kind=kind, detail=detail, provider="p")
    assert type(error) is expected
    assert error.transient == (expected in (LLMRateLimitError, LLMServerError, LLMTimeoutError))
    assert str(error) and "\n" not in str(error)
