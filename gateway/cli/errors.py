"""The exceptions a command reports as one line (``mnemogate: error: …``) instead of a traceback."""

from __future__ import annotations

from agent_core.llm import LLMConfigError
from agent_core.memory import MemoryStoreError
from agent_core.storage import StateError
from gateway.config import ConfigError
from gateway.contracts import AdapterConfigError
from gateway.export import ExportError
from gateway.identity import ClientKeyError
from gateway.schedules import ScheduleError
from gateway.usage import UsagePeriodError

USER_FACING_ERRORS: tuple[type[Exception], ...] = (
    ConfigError,
    StateError,
    MemoryStoreError,
    LLMConfigError,
    AdapterConfigError,
    ClientKeyError,
    ScheduleError,
    UsagePeriodError,
    ExportError,
)
