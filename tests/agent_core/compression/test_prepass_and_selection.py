"""What a compressed segment keeps, row by row: head, tail, shortened old tool outputs, repaired damage."""

from __future__ import annotations

from agent_core.compression import (
    BANNER,
    DUPLICATE_OUTPUT,
    CompressionSettings,
    Row,
    fallback_summary,
    plan_compression,
    repair_pairs,
)

from .transcripts import REPEATED_OUTPUT, Transcript

SETTINGS = CompressionSettings(min_tail_messages=4, long_tool_output_chars=1_500)


def contents(plan_messages: list) -> list[str]:  # type: ignore[type-arg]
    return [m.content or "" for m in plan_messages]


def test_old_tool_outputs_are_shortened_but_the_active_exchange_stays_verbatim() -> None:
    long_output = "HEADER: 3 results for 'miso'\n" + "x" * 3_000
    t = Transcript()
    t.user("first question")
    t.tool_step([REPEATED_OUTPUT])  # in the head: the first copy stays visible
    t.reply("first answer")
    for n in range(8):
        t.user(f"filler question {n} " * 10)
        t.reply(f"filler answer {n} " * 10)
    t.user("look it up again")
    t.tool_step([REPEATED_OUTPUT, long_output])  # an older exchange that ends up in the tail
    t.reply("same as before")
    t.user("and once more, please")
    t.tool_step([REPEATED_OUTPUT, long_output])  # the active exchange (no reply yet)
    nine = SETTINGS.model_copy(update={"min_tail_messages": 9})
    plan = plan_compression(t.records, settings=nine, context_window=1_024)
    assert plan is not None
    messages = plan.messages("## Goal\nsummary")
    texts = contents(messages)
    assert texts[:3] == ["first question", "", REPEATED_OUTPUT], "head kept verbatim"
    assert texts[3].startswith(BANNER)
    older, active = texts[-8:-5], texts[-2:]
    assert older[1] == DUPLICATE_OUTPUT, "a repeat of a visible earlier output is a back-reference"
    assert older[2].startswith("[tool web_search output, 3029 chars, omitted: first line: HEADER: 3 results")
    assert active == [REPEATED_OUTPUT, long_output], "the outputs the model is working with stay intact"


def test_the_head_is_protected_on_the_first_compression_only() -> None:
    t = Transcript()
    for n in range(10):
        t.user(f"question {n} " * 30)
        t.reply(f"answer {n} " * 30)
    first = plan_compression(t.records, settings=SETTINGS, context_window=2_000)
    assert first is not None
    assert [row.record.id for row in first.selection.head] == [1, 2, 3]
    child = Transcript(session_id="sg_child")
    child.extend(first.messages("## Goal\nsummary one"))
    for n in range(10):
        child.user(f"later {n} " * 30)
        child.reply(f"later answer {n} " * 30)
    second = plan_compression(child.records, settings=SETTINGS, context_window=2_000)
    assert second is not None
    assert second.selection.head == ()
    assert second.previous_summary == "## Goal\nsummary one"
    summarised = " ".join(row.text for row in second.middle)
    assert "question 0" in summarised, "the old head is summarised now"


def test_messages_sent_together_are_all_kept_after_the_summary() -> None:
    t = Transcript()
    for n in range(8):
        t.user(f"question {n} " * 30)
        t.reply(f"answer {n} " * 30)
    for text in ("one more thing", "actually two", "and a third"):
        t.user(text)
    plan = plan_compression(t.records, settings=SETTINGS, context_window=1_000)
    assert plan is not None
    texts = contents(plan.messages("## Goal\nsummary"))
    assert texts[-3:] == ["one more thing", "actually two", "and a third"]
    assert any(text.startswith("answer 7") for text in texts), "the last visible reply is kept"


def test_a_segment_too_small_to_have_a_middle_has_no_plan() -> None:
    t = Transcript()
    t.user("hi")
    t.reply("hello")
    t.user("how are you?")
    assert plan_compression(t.records, settings=SETTINGS, context_window=1_024) is None


def test_damaged_history_is_repaired_without_stubs() -> None:
    t = Transcript()
    t.user("go")
    t.add("tool", "orphan result", tool_call_id="ghost", tool_name="web_search")
    t.add(
        "assistant",
        "",
        tool_calls=(
            {"id": "a", "name": "web_search", "arguments": {}},
            {"id": "b", "name": "x", "arguments": {}},
        ),
    )
    t.add("tool", "answer a", tool_call_id="a", tool_name="web_search")
    t.add("assistant", "", tool_calls=({"id": "c", "name": "web_search", "arguments": {}},))
    t.reply("done")
    repaired = repair_pairs([Row.of(r) for r in t.records])
    assert [(r.role, r.text) for r in repaired] == [
        ("user", "go"),
        ("assistant", ""),
        ("tool", "answer a"),
        ("assistant", "done"),
    ]
    assert repaired[1].call_ids == ("a",)


def test_the_fallback_summary_holds_only_what_the_turns_say() -> None:
    t = Transcript()
    t.user("Please fix the crash in src/app/main.py")
    t.tool_step(["Traceback: KeyError 'user'"], name="read_file")
    t.reply("The crash comes from a missing key; I patched src/app/main.py.")
    body = fallback_summary(
        [Row.of(r) for r in t.records], previous="## Goal\nolder goal", reason="provider 503", max_chars=8_000
    )
    assert body.startswith("## Goal\nolder goal"), "the earlier summary is carried forward, not dropped"
    assert "provider 503" in body
    assert "'Please fix the crash in src/app/main.py'" in body
    assert "1. read_file(" in body and "Traceback: KeyError" in body
    assert "- src/app/main.py" in body
    assert "I patched src/app/main.py" in body
    assert (
        len(
            fallback_summary([Row.of(r) for r in t.records] * 200, previous=None, reason="x", max_chars=2_000)
        )
        <= 2_000
    )
