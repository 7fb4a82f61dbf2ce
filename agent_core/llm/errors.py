"""The model-call error hierarchy: one user-presentable line per failure, and whether a retry may help.

Every exception a provider SDK raises is translated into exactly one of these before it leaves
``agent_core.llm``; callers never see SDK exception types. ``str(err)`` is a single line that can be
shown to a chat user as-is; ``detail`` keeps the provider's own wording for logs only.
"""

from __future__ import annotations

__all__ = [
    "LLMAuthError",
    "LLMBadRequestError",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMQuotaError",
    "LLMRateLimitError",
    "LLMServerError",
    "LLMTimeoutError",
    "ScriptExhaustedError",
    "error_for_status",
]


class LLMError(Exception):
    """A model call failed; ``str(self)`` is one line fit to show the user."""

    transient: bool = False
    """True when the same request may succeed if sent again later (the retry policy reads this)."""

    default_message = "The model call failed."

    def __init__(
        self,
        message: str | None = None,
        *,
        provider: str = "",
        status: int | None = None,
        retry_after: float | None = None,
        detail: str = "",
    ) -> None:
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        self.detail = detail
        super().__init__(" ".join((message or self.default_message).split()))


class LLMAuthError(LLMError):
    default_message = "The model provider rejected the API key; an operator must check the configured key."


class LLMQuotaError(LLMError):
    default_message = "The model provider account is out of credit or quota; an operator must top it up."


class LLMRateLimitError(LLMError):
    transient = True
    default_message = "The model provider is rate-limiting requests; please try again in a moment."


class LLMServerError(LLMError):
    transient = True
    default_message = "The model provider had an internal error; please try again in a moment."


class LLMConnectionError(LLMError):
    transient = True
    default_message = "The model provider could not be reached; please try again in a moment."


class LLMTimeoutError(LLMError):
    transient = True
    default_message = "The model took too long to answer; please try again."


class LLMBadRequestError(LLMError):
    default_message = "The model provider refused the request as invalid."


class LLMConfigError(ValueError):
    """The model settings cannot build a client (e.g. a hosted provider without an API key).

    Not an :class:`LLMError`: it is raised at boot by the factory, never during a turn.
    """


_QUOTA_WORDS = (
    "insufficient_quota",
    "billing",
    "credit balance",
    "insufficient credits",
    "exceeded your current quota",
)


def error_for_status(
    status: int | None,
    *,
    kind: str | None,
    detail: str,
    provider: str,
    retry_after: float | None = None,
) -> LLMError:
    """Classify a provider error by HTTP status and the provider's error type/code (``kind``).

    ``kind`` wins over ``status`` because errors inside a stream arrive under an HTTP 200.
    """
    kind = (kind or "").lower()
    lowered = f"{kind} {detail}".lower()
    cls: type[LLMError]
    if status == 402 or any(word in lowered for word in _QUOTA_WORDS):
        cls = LLMQuotaError
    elif status in (401, 403) or kind in ("authentication_error", "permission_error", "invalid_api_key"):
        cls = LLMAuthError
    elif status == 429 or kind in ("rate_limit_error", "rate_limit_exceeded"):
        cls = LLMRateLimitError
    elif status == 408 or kind == "timeout_error":
        cls = LLMTimeoutError
    elif kind in ("api_error", "overloaded_error", "server_error") or (status or 0) >= 500:
        cls = LLMServerError
    elif status == 413:
        return LLMBadRequestError(
            "The conversation is too large for the model.", provider=provider, status=status, detail=detail
        )
    elif status is None or status < 400:
        # An error event inside a stream of unknown kind: the provider broke off, not our request.
        cls = LLMServerError
    else:
        cls = LLMBadRequestError
    return cls(provider=provider, status=status, retry_after=retry_after, detail=detail)


class ScriptExhaustedError(RuntimeError):
    """A :class:`ScriptedClient` was called more times than it has steps: a test or bench bug.

    Deliberately not an :class:`LLMError`, so a turn loop cannot mistake it for a provider failure.
    """
