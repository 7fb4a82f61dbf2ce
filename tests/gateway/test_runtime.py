"""The composition root: the gateway pieces it builds and the adapters it loads from config."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.config import Home, Settings
from gateway.contracts import AdapterConfigError
from gateway.runtime import build_gateway, configured_adapters, open_runtime, worker_pool


def test_no_platform_adapter_is_loaded_unless_enabled() -> None:
    assert (
        configured_adapters(
            Settings.model_validate({"adapters": {"telegram": {"enabled": False, "token": "x"}}})
        )
        == {}
    )


def test_an_enabled_adapter_that_is_not_installed_is_a_clear_error() -> None:
    with pytest.raises(AdapterConfigError, match="no adapter named 'nosuchchat'"):
        configured_adapters(Settings.model_validate({"adapters": {"nosuchchat": {"enabled": True}}}))


async def test_the_runtime_wires_pipeline_queue_and_workers(home: Path) -> None:
    client = ScriptedClient(default=ScriptStep.reply("hi"))
    async with open_runtime(Home(home), Settings(), client=client) as runtime:
        gateway = build_gateway(runtime)
        async with worker_pool(runtime) as pool:
            assert pool.alive
        assert not pool.alive
        assert gateway.pipeline.stages[-1].__name__ == "_enqueue"
