"""What a streaming caller reads while its turn runs: the reply as it grows, and exactly the stored reply."""

from __future__ import annotations

from agent_core.agent import ReplyDelta, ToolFinished, ToolStarted
from gateway.api import Answer, LiveAnswer


async def _read(answer: LiveAnswer) -> list[str]:
    return [delta async for delta in answer.deltas()]


async def test_the_deltas_add_up_to_the_delivered_reply() -> None:
    answer = LiveAnswer("chat:1", 10, live=True)
    for piece in ("Hel", "lo"):
        answer.on_event(ReplyDelta(piece))
    answer.settle(Answer("Hello, world", "reply"))
    assert await _read(answer) == ["Hel", "lo", ", world"]
    assert await answer.answer() == Answer("Hello, world", "reply")


async def test_text_before_a_tool_call_stays_and_the_next_step_starts_after_a_blank_line() -> None:
    answer = LiveAnswer("chat:1", 10, live=True)
    answer.on_event(ReplyDelta("Let me look."))
    answer.on_event(ToolStarted("session_search", "c1"))
    answer.on_event(ToolFinished("session_search", "c1", is_error=False))
    answer.on_event(ReplyDelta("Found"))
    answer.settle(Answer("Found it.", "reply"))
    assert "".join(await _read(answer)) == "Let me look.\n\nFound it."


async def test_a_turn_that_ran_elsewhere_arrives_whole_and_a_failure_adds_nothing() -> None:
    elsewhere, failed = LiveAnswer("chat:1", 10, live=True), LiveAnswer("chat:2", 10, live=True)
    elsewhere.settle(Answer("All at once.", "reply"))
    failed.on_event(ReplyDelta("Part"))
    failed.settle(Answer("Sorry, the model failed.", "error"))
    assert await _read(elsewhere) == ["All at once."]
    assert await _read(failed) == ["Part"]
    assert (await failed.answer()).kind == "error"
