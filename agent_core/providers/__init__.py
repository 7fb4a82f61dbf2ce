"""External memory providers beside the built-in memory (DESIGN §9): contract, manager, scrubber, providers.

Public surface: the ``MemoryProvider`` ABC and its ``ProviderContext``/``MemoryWrite`` records; the
``MemoryManager`` (a ``RecallSource`` and ``CompressionHooks``, with timeouts, a circuit breaker and a
``ProviderHealth``); ``MirroringAuditSink`` (mirrors built-in memory writes); the streaming
``RecallScrubber``; the ``local``, ``honcho`` and ``mem0`` providers; settings, the catalog and errors.
"""

from .base import MemoryAction, MemoryProvider, MemoryWrite, ProviderContext, SwitchReason
from .breaker import CircuitBreaker, HealthState, ProviderHealth
from .catalog import build_manager, build_provider
from .errors import (
    CircuitOpenError,
    ProviderCallError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from .honcho import HonchoProvider
from .local import LocalProvider
from .manager import MemoryManager
from .mem0 import Mem0Provider
from .mirror import MirroringAuditSink
from .scrubber import RecallScrubber, scrub_recall
from .settings import (
    BreakerSettings,
    HonchoProviderSettings,
    LocalProviderSettings,
    Mem0ProviderSettings,
    ProviderName,
    ProviderSettings,
)

__all__ = [
    "BreakerSettings",
    "CircuitBreaker",
    "CircuitOpenError",
    "HealthState",
    "HonchoProvider",
    "HonchoProviderSettings",
    "LocalProvider",
    "LocalProviderSettings",
    "Mem0Provider",
    "Mem0ProviderSettings",
    "MemoryAction",
    "MemoryManager",
    "MemoryProvider",
    "MemoryWrite",
    "MirroringAuditSink",
    "ProviderCallError",
    "ProviderConfigError",
    "ProviderContext",
    "ProviderError",
    "ProviderHealth",
    "ProviderName",
    "ProviderSettings",
    "ProviderUnavailableError",
    "RecallScrubber",
    "SwitchReason",
    "build_manager",
    "build_provider",
    "scrub_recall",
]
