"""Who may talk to the bot and how fast: the access policy, its settings, the per-person rate limiter and
the per-address budget for new persons."""

from gateway.access.control import NOT_ALLOWED, AccessControl, Admitted, Denied
from gateway.access.new_persons import NewPersonBudget
from gateway.access.rate_limit import RateDecision, RateLimiter
from gateway.access.settings import (
    OPEN_BY_DEFAULT,
    AccessMode,
    AccessSettings,
    NewPersonsSettings,
    PlatformAccess,
    RateLimitSettings,
    ResolvedAccess,
    TokenBucketSettings,
)

__all__ = [
    "NOT_ALLOWED",
    "OPEN_BY_DEFAULT",
    "AccessControl",
    "AccessMode",
    "AccessSettings",
    "Admitted",
    "Denied",
    "NewPersonBudget",
    "NewPersonsSettings",
    "PlatformAccess",
    "RateDecision",
    "RateLimitSettings",
    "RateLimiter",
    "ResolvedAccess",
    "TokenBucketSettings",
]
