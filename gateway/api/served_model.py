"""The model ``/v1`` names: the one that actually answers, whatever model name a request asked for."""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.llm import ModelSettings

OFFLINE_MODEL = "offline"
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class ServedModel:
    """``id`` as responses name it, who ``owned_by`` it, and its context window in tokens."""

    id: str
    owned_by: str
    context_window: int = 200_000

    @classmethod
    def of(cls, settings: ModelSettings) -> ServedModel:
        """The configured provider's model, or the offline model when no provider is configured."""
        if settings.provider == "offline":
            return cls(OFFLINE_MODEL, "mnemogate", settings.context_window)
        return cls(settings.model, settings.provider, settings.context_window)

    @property
    def client_context_chars(self) -> int:
        """How much of a client's history a request may carry: about half the context window."""
        return self.context_window * _CHARS_PER_TOKEN // 2
