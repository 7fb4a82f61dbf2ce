"""Who may talk to the bot and how fast: the access policy, its settings, and the per-person rate limiter."""

from gateway.access.control import NOT_ALLOWED, AccessControl, Admitted, Denied
from gateway.access.rate_limit import RateDecision, RateLimiter
from gateway.access.settings import (
    OPEN_BY_DEFAULT,
    AccessMode,
    AccessSettings,
    PlatformAccess,
    RateLimitSettings,
    ResolvedAccess,
)

__all__ = [
    "NOT_ALLOWED",
    "OPEN_BY_DEFAULT",
    "AccessControl",
    "AccessMode",
    "AccessSettings",
    "Admitted",
    "Denied",
    "PlatformAccess",
    "RateDecision",
    "RateLimitSettings",
    "RateLimiter",
    "ResolvedAccess",
]
