"""The registry: stable specs, and every tool-level problem becomes a readable error result."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping

import pytest

from agent_core.actor import Actor
from agent_core.llm import ToolCall, canonical_json
from agent_core.tools import (
    Tool,
    ToolContext,
    ToolRegistrationError,
    ToolRegistry,
    ToolResult,
    truncation_marker,
)

CTX = ToolContext(Actor("alice", conversation_id="conv-1"))


async def echo(args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
    return ToolResult.from_json({"person": ctx.actor.person_id, "args": dict(args)})


async def boom(args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
    raise RuntimeError("kaput")


async def big(args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
    return ToolResult("x" * int(str(args["size"])))


ECHO_SCHEMA: dict[str, object] = {
    "type": "object",
    "required": ["text"],
    "properties": {
        "text": {"type": "string", "description": "what to echo"},
        "mode": {"type": "string", "enum": ["loud", "quiet"]},
        "count": {"type": "integer"},
    },
}


def tools() -> list[Tool]:
    return [
        Tool("echo", "Echo the arguments.", ECHO_SCHEMA, echo),
        Tool("boom", "Always fails.", {"type": "object", "properties": {}}, boom),
        Tool("big", "Large output.", {"type": "object", "properties": {"size": {"type": "integer"}}}, big),
    ]


def error_of(result: ToolResult) -> str:
    assert result.is_error
    payload = json.loads(result.content)
    assert payload["success"] is False
    return str(payload["error"])


def test_specs_are_sorted_and_serialise_identically_whatever_the_order() -> None:
    forward, backward = ToolRegistry(tools()), ToolRegistry(reversed(tools()))
    assert [s.name for s in forward.specs()] == ["big", "boom", "echo"]

    def wire(registry: ToolRegistry) -> str:
        return json.dumps([[s.name, s.description, s.parameters] for s in registry.specs()])

    assert wire(forward) == wire(backward) == wire(forward)
    echo_spec = forward.specs()[2]
    assert json.dumps(echo_spec.parameters) == canonical_json(ECHO_SCHEMA).replace(",", ", ").replace(
        ":", ": "
    )


async def test_editing_a_returned_spec_does_not_change_argument_checking() -> None:
    registry = ToolRegistry(tools())
    handed_out = registry.specs()[2].parameters
    assert isinstance(handed_out, dict)
    handed_out["required"] = []
    assert error_of(await registry.call("echo", {}, CTX)) == "Missing required argument 'text'."


def test_specs_can_be_narrowed_for_a_memory_flush() -> None:
    assert [s.name for s in ToolRegistry(tools()).specs(only=["echo", "nope"])] == ["echo"]


def test_registration_refuses_duplicates_bad_names_and_non_json_schemas() -> None:
    registry = ToolRegistry(tools())
    with pytest.raises(ToolRegistrationError, match="already registered"):
        registry.register(Tool("echo", "again", ECHO_SCHEMA, echo))
    with pytest.raises(ToolRegistrationError, match="invalid tool name"):
        registry.register(Tool("bad name", "x", ECHO_SCHEMA, echo))
    with pytest.raises(ToolRegistrationError, match="not JSON"):
        registry.register(Tool("odd", "x", {"type": "object", "default": object()}, echo))
    with pytest.raises(ToolRegistrationError, match="type 'object'"):
        registry.register(Tool("arr", "x", {"type": "array"}, echo))


async def test_a_later_tool_plugs_in_without_touching_the_registry() -> None:
    registry = ToolRegistry(tools())

    async def search(args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        return ToolResult.from_json({"results": [], "query": args["query"]})

    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    registry.register(Tool("session_search", "Search past conversations.", schema, search))
    assert "session_search" in registry.names()
    result = await registry.call("session_search", {"query": "tea"}, CTX)
    assert json.loads(result.content) == {"results": [], "query": "tea"}


async def test_unknown_tool_names_the_available_ones() -> None:
    message = error_of(await ToolRegistry(tools()).call("fly", {}, CTX))
    assert message == "Unknown tool 'fly'. Available tools: big, boom, echo."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "Missing required argument 'text'."),
        ({"text": 3}, "Argument 'text' must be a string (got integer)."),
        ({"text": "hi", "mode": "shout"}, "Invalid mode 'shout'. Use 'loud' or 'quiet'."),
        ({"text": "hi", "count": True}, "Argument 'count' must be an integer (got boolean)."),
    ],
)
async def test_bad_arguments_come_back_as_errors(args: dict[str, object], message: str) -> None:
    assert error_of(await ToolRegistry(tools()).call("echo", args, CTX)) == message


async def test_explicit_nulls_for_optional_arguments_are_accepted() -> None:
    result = await ToolRegistry(tools()).call("echo", {"text": "hi", "mode": None}, CTX)
    assert not result.is_error


async def test_a_raising_handler_becomes_an_error_result_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="agent_core.tools.registry"):
        result = await ToolRegistry(tools()).call("boom", {}, CTX)
    assert error_of(result) == "tool boom failed: RuntimeError: kaput"
    record = next(r for r in caplog.records if "boom" in r.getMessage())
    assert record.exc_info is not None
    assert "conv-1" in record.getMessage()


async def test_cancellation_is_not_swallowed() -> None:
    started = asyncio.Event()

    async def hang(args: Mapping[str, object], ctx: ToolContext) -> ToolResult:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    registry = ToolRegistry([Tool("hang", "waits", {"type": "object"}, hang)])
    task = asyncio.create_task(registry.call("hang", {}, CTX))
    await asyncio.wait_for(started.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_large_output_is_cut_with_a_marker_within_budget() -> None:
    registry = ToolRegistry(tools(), output_budget=1_000)
    result = await registry.call("big", {"size": 5_000}, CTX)
    assert len(result.content) <= 1_000
    shown = result.content.index("\n")
    assert result.content == "x" * shown + "\n" + truncation_marker(shown, 5_000)
    assert result.content.endswith(f"[… truncated: {shown:,} of 5,000 characters shown …]")
    small = await registry.call("big", {"size": 1_000}, CTX)
    assert small.content == "x" * 1_000


async def test_default_budget_is_16000_chars() -> None:
    result = await ToolRegistry(tools()).call("big", {"size": 40_000}, CTX)
    assert len(result.content) <= 16_000
    assert "of 40,000 characters shown" in result.content


async def test_dispatch_turns_unparseable_arguments_into_an_error() -> None:
    call = ToolCall.from_json("c1", "echo", "{not json")
    message = error_of(await ToolRegistry(tools()).dispatch(call, CTX))
    assert message.startswith("Arguments for tool 'echo' were not usable: arguments are not valid JSON")
    ok = await ToolRegistry(tools()).dispatch(ToolCall.from_json("c2", "echo", '{"text": "hi"}'), CTX)
    assert json.loads(ok.content) == {"person": "alice", "args": {"text": "hi"}}
