"""Model clients: one ``LLMClient`` protocol over Anthropic, OpenAI-compatible, offline and scripted models.

Public surface below. The provider clients live in ``agent_core.llm.anthropic_client`` and
``agent_core.llm.openai_client`` and are not imported here, because their SDKs are slow to import;
use :func:`build_client`. Loopback fake provider servers live in ``agent_core.llm.fakes``.
"""

from agent_core.llm.caching import apply_system_and_3, strip_cache_markers
from agent_core.llm.client import ClosableLLMClient, LLMClient, LLMRequest, complete
from agent_core.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMQuotaError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
    ScriptExhaustedError,
)
from agent_core.llm.events import (
    Completion,
    LLMEvent,
    ReasoningDelta,
    StopEvent,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from agent_core.llm.factory import build_client
from agent_core.llm.messages import ChatMessage, Role, ToolCall, ToolSpec, canonical_json
from agent_core.llm.offline import OFFLINE_LABEL, OfflineClient
from agent_core.llm.retry import RetryPolicy
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from agent_core.llm.settings import ModelSettings, Provider

__all__ = [
    "OFFLINE_LABEL",
    "ChatMessage",
    "ClosableLLMClient",
    "Completion",
    "LLMAuthError",
    "LLMBadRequestError",
    "LLMClient",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMEvent",
    "LLMQuotaError",
    "LLMRateLimitError",
    "LLMRequest",
    "LLMServerError",
    "LLMTimeoutError",
    "ModelSettings",
    "OfflineClient",
    "Provider",
    "ReasoningDelta",
    "RetryPolicy",
    "Role",
    "ScriptExhaustedError",
    "ScriptStep",
    "ScriptedClient",
    "StopEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallEvent",
    "ToolSpec",
    "UsageEvent",
    "apply_system_and_3",
    "build_client",
    "canonical_json",
    "complete",
    "strip_cache_markers",
]
