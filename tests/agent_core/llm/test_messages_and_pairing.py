"""Neutral message types and the tool call/result pairing repair."""

from __future__ import annotations

from agent_core.llm import ChatMessage, LLMRequest, ToolCall
from agent_core.llm.anthropic_wire import to_anthropic_messages
from agent_core.llm.openai_wire import to_openai_messages
from agent_core.llm.tool_pairing import MISSING_RESULT_TEXT, pair_tool_messages


def test_tool_call_from_json_parses_an_object() -> None:
    call = ToolCall.from_json("c1", "memory", '{"action": "add", "content": "x"}')
    assert call.arguments == {"action": "add", "content": "x"}
    assert call.arguments_error is None and call.raw_arguments is None


def test_tool_call_from_json_keeps_broken_text() -> None:
    for raw, reason in (('{"a": ', "not valid JSON"), ("[1, 2]", "must be a JSON object")):
        call = ToolCall.from_json("c1", "memory", raw)
        assert call.arguments == {}
        assert call.raw_arguments == raw
        assert call.arguments_error is not None and reason in call.arguments_error


def test_empty_arguments_mean_no_arguments() -> None:
    assert ToolCall.from_json("c1", "skills_list", "  ") == ToolCall("c1", "skills_list", {})


def test_arguments_replay_as_canonical_json() -> None:
    call = ToolCall("c1", "memory", {"b": 1, "a": "é"})
    assert call.arguments_json() == '{"a":"é","b":1}'


def test_orphan_result_is_dropped_and_unanswered_call_gets_a_stub() -> None:
    call = ToolCall("c1", "memory", {})
    messages = (
        ChatMessage("tool", "stray", tool_call_id="nobody"),
        ChatMessage("user", "hi"),
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("user", "are you there?"),  # the process crashed before the result was saved
    )
    repaired = pair_tool_messages(messages)
    assert [m.role for m in repaired] == ["user", "assistant", "tool", "user"]
    assert repaired[2] == ChatMessage("tool", MISSING_RESULT_TEXT, tool_call_id="c1", name="memory")


def test_both_wire_formats_send_only_paired_tool_messages() -> None:
    call = ToolCall("c1", "memory", {})
    messages = (ChatMessage("user", "hi"), ChatMessage("assistant", "", tool_calls=(call,)))
    anthropic = to_anthropic_messages(messages)
    assert anthropic[-1]["content"][0]["tool_use_id"] == "c1"
    openai = to_openai_messages(LLMRequest("", messages))
    assert openai[-1] == {"role": "tool", "tool_call_id": "c1", "content": MISSING_RESULT_TEXT}


def test_anthropic_shape_merges_same_role_and_puts_tool_results_first() -> None:
    call = ToolCall("c1", "memory", {"x": 1})
    messages = (
        ChatMessage("user", " first "),
        ChatMessage("user", "second"),
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("tool", "", tool_call_id="c1"),
        ChatMessage("system", "Note: context was compressed."),
        ChatMessage("assistant", "   "),  # empty after normalisation: dropped, never sent empty
        ChatMessage("user", "third"),
    )
    wire = to_anthropic_messages(messages)
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert wire[0]["content"] == [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    assert wire[1]["content"] == [{"type": "tool_use", "id": "c1", "name": "memory", "input": {"x": 1}}]
    assert [b["type"] for b in wire[2]["content"]] == ["tool_result", "text", "text"]
    assert wire[2]["content"][0]["content"] == "(no output)"
