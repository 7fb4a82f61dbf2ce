"""When compression fires: prompt tokens (provider-reported when known, else estimated) ≥ threshold × window.

Invariants: one estimator (``estimate``) everywhere; a provider's count, when it reported one, replaces
the estimate for the prompt it measured and only messages added since are estimated — so a rough
over-count cannot trigger compression loops once real usage is known. A provider that reports zero
prompt tokens (a scripted or offline model) is treated as not reporting.
"""

from __future__ import annotations

from agent_core.llm import LLMRequest

from .estimate import messages_tokens, request_tokens
from .settings import CompressionSettings


class CompressionTrigger:
    """The threshold test for one model's context window."""

    def __init__(self, settings: CompressionSettings, context_window: int) -> None:
        self.settings = settings
        self.context_window = context_window

    @property
    def threshold_tokens(self) -> int:
        return self.settings.threshold_tokens(self.context_window)

    def due(self, prompt_tokens: int) -> bool:
        """True when automatic compression should run before a call of ``prompt_tokens``."""
        return self.settings.enabled and prompt_tokens >= self.threshold_tokens


class PromptGauge:
    """The prompt size of a turn's next call: the last reported count plus an estimate of what was added."""

    def __init__(self) -> None:
        self._reported = 0
        self._covered = 0

    def observe(self, prompt_tokens: int, request: LLMRequest) -> None:
        """The provider measured ``request`` at ``prompt_tokens`` (input + cache read + cache write)."""
        self._reported = max(prompt_tokens, 0)
        self._covered = len(request.messages)

    def reset(self) -> None:
        """Forget reported usage (the history was replaced, e.g. by a compression)."""
        self._reported = 0
        self._covered = 0

    def tokens(self, request: LLMRequest) -> int:
        if self._reported <= 0 or self._covered > len(request.messages):
            return request_tokens(request)
        return self._reported + messages_tokens(request.messages[self._covered :])
