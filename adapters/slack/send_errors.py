"""The mapping from slack_sdk errors to the gateway's ``SendError`` taxonomy.

Invariants: HTTP 429 / ``ratelimited`` is retryable with Slack's ``Retry-After`` (seconds); network failures
are retryable; every other rejection is final. Slack never rejects mrkdwn, so there is no BadFormatError.
Error texts carry Slack's error code only, never a token.
"""

from __future__ import annotations

from slack_sdk.errors import SlackApiError

from gateway.contracts import SendError

_KINDS = {
    "msg_too_long": "too_long",
    "channel_not_found": "not_found",
    "thread_not_found": "not_found",
    "message_not_found": "not_found",
    "not_in_channel": "forbidden",
    "is_archived": "forbidden",
    "restricted_action": "forbidden",
    "cant_update_message": "forbidden",
    "invalid_auth": "unauthorized",
    "not_authed": "unauthorized",
    "account_inactive": "unauthorized",
    "token_revoked": "unauthorized",
}
_TRANSIENT = frozenset({"internal_error", "fatal_error", "service_unavailable", "request_timeout"})


def _retry_after(error: SlackApiError) -> float | None:
    headers = error.response.headers or {}
    for name, value in headers.items():
        if name.lower() == "retry-after":
            raw = value[0] if isinstance(value, list) else value
            try:
                return float(raw)
            except (TypeError, ValueError):
                return None
    return None


def send_error(error: SlackApiError, method: str) -> SendError:
    """The ``SendError`` for a failed Web API call."""
    status = error.response.status_code
    code = str(error.response.get("error") or f"http_{status}")
    text = f"slack {method} failed: {code}"
    if status == 429 or code == "ratelimited":
        return SendError(text, retryable=True, retry_after=_retry_after(error) or 1.0, kind="rate_limited")
    if status >= 500 or code in _TRANSIENT:
        return SendError(text, retryable=True, kind="transient")
    return SendError(text, retryable=False, kind=_KINDS.get(code, "unknown"))


def network_error(error: Exception, method: str) -> SendError:
    return SendError(f"slack {method} failed: {type(error).__name__}", retryable=True, kind="transient")
