"""Building the configured provider from settings: the one place that maps a name to a class.

Invariant: ``name: none`` builds nothing; any other name builds exactly that provider, whose
availability (key, package) the ``MemoryManager`` checks at start-up. The ``local`` provider's facts live
in the ``FactStore`` the caller passes, by default the SQLite file ``memory.provider.local.db_path``.
"""

from __future__ import annotations

from pathlib import Path

from agent_core.llm import LLMClient
from agent_core.metering import UsageRecorder
from agent_core.search import SessionSearch
from agent_core.storage import FactStore
from agent_core.storage.sqlite.fact_store import SqliteFactStore

from .base import MemoryProvider
from .honcho import HonchoProvider
from .local import LocalProvider
from .manager import MemoryManager
from .mem0 import Mem0Provider
from .settings import ProviderSettings


def build_provider(
    settings: ProviderSettings,
    *,
    home: Path,
    extractor: LLMClient | None = None,
    facts: FactStore | None = None,
    recall: SessionSearch | None = None,
    usage: UsageRecorder | None = None,
) -> MemoryProvider | None:
    """The provider ``settings`` names (with secrets already filled in), or None for ``none``.

    ``facts``: the ``local`` provider's store (a storage backend's); None opens the SQLite file in ``home``.
    ``recall``: the session search the ``local`` provider recalls earlier conversations through.
    ``usage``: where the ``local`` provider's extraction calls are charged (None: not recorded).
    """
    if settings.name == "local":
        if facts is None:
            facts = SqliteFactStore(home / settings.local.db_path)
        return LocalProvider(
            facts,
            settings.local,
            extractor=extractor,
            char_budget=settings.recall_char_budget,
            recall=recall,
            usage=usage,
        )
    if settings.name == "honcho":
        return HonchoProvider(settings.honcho)
    if settings.name == "mem0":
        return Mem0Provider(settings.mem0)
    return None


def build_manager(
    settings: ProviderSettings,
    *,
    home: Path,
    extractor: LLMClient | None = None,
    facts: FactStore | None = None,
    recall: SessionSearch | None = None,
    usage: UsageRecorder | None = None,
) -> MemoryManager:
    """A ``MemoryManager`` (enter it with ``async with``) running the configured provider, if any."""
    provider = build_provider(
        settings, home=home, extractor=extractor, facts=facts, recall=recall, usage=usage
    )
    return MemoryManager([provider] if provider is not None else [], settings=settings)
