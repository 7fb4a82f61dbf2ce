"""The single retry policy for model calls: bounded by attempts and by one total time budget.

Provider SDKs are built with ``max_retries=0``; every retry happens here, so the number of HTTP
requests per call never exceeds ``max_attempts``. Only transient ``LLMError`` s are retried, each
wait honours the provider's retry-after (capped) or else backs off exponentially with jitter, and a
call is retried only until its stream has yielded its first event: streamed text is never repeated.
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
)

from agent_core.llm.errors import LLMError
from agent_core.llm.events import LLMEvent
from agent_core.llm.settings import ModelSettings

__all__ = ["RetryPolicy", "parse_retry_after", "stream_with_retries"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 3
    budget_s: float = 60.0
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 20.0
    retry_after_cap_s: float = 30.0

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> RetryPolicy:
        return cls(
            max_attempts=settings.max_attempts,
            budget_s=settings.retry_budget_s,
            backoff_initial_s=settings.backoff_initial_s,
            backoff_max_s=settings.backoff_max_s,
            retry_after_cap_s=settings.retry_after_cap_s,
        )


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (delta-seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, LLMError) and exc.transient


class _RetryAfterOrBackoff:
    """Wait what the provider asked for (capped), else exponential backoff with jitter."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy

    def __call__(self, state: RetryCallState) -> float:
        policy = self._policy
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, LLMError) and exc.retry_after is not None:
            return min(exc.retry_after, policy.retry_after_cap_s)
        # Jitter spreads the retries of many conversations that failed together.
        exponential = policy.backoff_initial_s * 2 ** (state.attempt_number - 1)
        return float(min(exponential + random.uniform(0, policy.backoff_initial_s), policy.backoff_max_s))


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome is not None else None
    if isinstance(exc, LLMError):
        _log.warning(
            "%s call attempt %d failed: %s (status=%s, detail=%r); retrying in %.2fs",
            exc.provider or "model",
            state.attempt_number,
            type(exc).__name__,
            exc.status,
            exc.detail[:300],
            state.upcoming_sleep,
        )


async def stream_with_retries(
    policy: RetryPolicy, open_attempt: Callable[[], AsyncGenerator[LLMEvent, None]]
) -> AsyncIterator[LLMEvent]:
    """Yield the events of the first attempt that produced an event, retrying transient failures.

    ``open_attempt`` starts one HTTP request per call and must raise only ``LLMError`` s.
    """
    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts) | stop_before_delay(policy.budget_s),
        wait=_RetryAfterOrBackoff(policy),
        retry=retry_if_exception(_is_transient),
        before_sleep=_log_retry,
        reraise=True,
    )

    async def first_event() -> tuple[AsyncGenerator[LLMEvent, None], LLMEvent | None]:
        events = open_attempt()
        try:
            return events, await anext(events)
        except StopAsyncIteration:
            return events, None
        except BaseException:
            await events.aclose()
            raise

    opened: tuple[AsyncGenerator[LLMEvent, None], LLMEvent | None] = await retrying(first_event)
    events, first = opened
    try:
        if first is None:
            return
        yield first
        async for event in events:
            yield event
    finally:
        await events.aclose()
