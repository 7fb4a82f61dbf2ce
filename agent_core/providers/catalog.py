"""Building the configured provider from settings: the one place that maps a name to a class.

Invariant: ``name: none`` builds nothing; any other name builds exactly that provider, whose
availability (key, package) the ``MemoryManager`` checks at start-up.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.llm import LLMClient

from .base import MemoryProvider
from .honcho import HonchoProvider
from .local import LocalProvider
from .manager import MemoryManager
from .mem0 import Mem0Provider
from .settings import ProviderSettings


def build_provider(
    settings: ProviderSettings, *, home: Path, extractor: LLMClient | None = None
) -> MemoryProvider | None:
    """The provider ``settings`` names (with secrets already filled in), or None for ``none``."""
    if settings.name == "local":
        return LocalProvider(
            home, settings.local, extractor=extractor, char_budget=settings.recall_char_budget
        )
    if settings.name == "honcho":
        return HonchoProvider(settings.honcho)
    if settings.name == "mem0":
        return Mem0Provider(settings.mem0)
    return None


def build_manager(
    settings: ProviderSettings, *, home: Path, extractor: LLMClient | None = None
) -> MemoryManager:
    """A ``MemoryManager`` (enter it with ``async with``) running the configured provider, if any."""
    provider = build_provider(settings, home=home, extractor=extractor)
    return MemoryManager([provider] if provider is not None else [], settings=settings)
