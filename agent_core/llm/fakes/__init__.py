"""Loopback fake model providers speaking the real wire protocols (product code: tests and benches).

Each fake is an async context manager serving on 127.0.0.1 with an OS-assigned port, recording every
request and replying from a script of :class:`FakeReply`. Point the real SDK at ``fake.base_url``.
"""

from agent_core.llm.fakes.anthropic_server import FakeAnthropicServer, anthropic_cache_items
from agent_core.llm.fakes.errors import FakeServerError
from agent_core.llm.fakes.loopback import LoopbackServer
from agent_core.llm.fakes.openai_server import FakeOpenAIServer
from agent_core.llm.fakes.prefix_cache import CacheUsage, PrefixCache
from agent_core.llm.fakes.provider import FakeProviderServer, ReplySource
from agent_core.llm.fakes.script import FakeHTTPResponse, FakeReply, FakeToolCall, RecordedRequest

__all__ = [
    "CacheUsage",
    "FakeAnthropicServer",
    "FakeHTTPResponse",
    "FakeOpenAIServer",
    "FakeProviderServer",
    "FakeReply",
    "FakeServerError",
    "FakeToolCall",
    "LoopbackServer",
    "PrefixCache",
    "RecordedRequest",
    "ReplySource",
    "anthropic_cache_items",
]
