"""Builds the configured model client: :func:`build_client` turns :class:`ModelSettings` into a client.

It builds exactly what it is told: choosing "offline" when no key is configured is the config
layer's decision; a hosted provider without a key is an :class:`LLMConfigError` here.
"""

from __future__ import annotations

from pydantic import SecretStr

from agent_core.llm.client import ClosableLLMClient
from agent_core.llm.errors import LLMConfigError
from agent_core.llm.offline import OfflineClient
from agent_core.llm.settings import ModelSettings

__all__ = ["build_client"]


def build_client(settings: ModelSettings) -> ClosableLLMClient:
    """A client to enter once (``async with``) at the composition root."""
    if settings.provider == "offline":
        return OfflineClient()
    keyless_local = settings.provider == "openai" and settings.base_url is not None
    if keyless_local and settings.api_key is None:
        # Ollama, vLLM and llama.cpp servers ignore the key, but the SDK insists on one.
        settings = settings.model_copy(update={"api_key": SecretStr("unused-local-server")})
    if settings.api_key is None or not settings.api_key.get_secret_value().strip():
        raise LLMConfigError(f"model provider {settings.provider!r} needs an api_key")
    # The SDKs take seconds to import; offline deployments and the CLI never pay for them.
    if settings.provider == "anthropic":
        from agent_core.llm.anthropic_client import AnthropicClient

        return AnthropicClient(settings)
    from agent_core.llm.openai_client import OpenAIClient

    return OpenAIClient(settings)
