"""Random and hand-built transcripts as stored rows, for the pure compression planner.

A transcript is what the turn loop stores: user messages (sometimes several in a row, sometimes with a
recall ``api_content``), assistant tool-call steps each followed by all their results (some failing, some
long, some repeated), visible replies, failure replies and system notes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from agent_core.storage import MessageRecord, NewMessage

REPEATED_OUTPUT = "The build log says: all 412 tests passed in 3.2s on runner ci-7. " * 5
FAILURE_REPLY = (
    "Sorry — I couldn't get an answer from the model (provider 500). Please try again in a moment."
)


@dataclass
class Transcript:
    """Builds MessageRecords with increasing ids, like one segment of state.db."""

    session_id: str = "sg_test"
    conversation_id: str = "cv_test"
    records: list[MessageRecord] = field(default_factory=list)
    next_id: int = 1
    calls: int = 0

    def add(self, role: str, content: str | None, **extra: Any) -> MessageRecord:
        record = MessageRecord(
            id=self.next_id,
            session_id=self.session_id,
            conversation_id=self.conversation_id,
            role=role,
            content=content,
            tool_calls=extra.get("tool_calls"),
            tool_call_id=extra.get("tool_call_id"),
            tool_name=extra.get("tool_name"),
            reasoning=None,
            author=extra.get("author"),
            platform_message_id=None,
            api_content=extra.get("api_content"),
            created_at=1_000.0 + self.next_id,
        )
        self.next_id += 1
        self.records.append(record)
        return record

    def user(self, text: str, *, recall: bool = False) -> MessageRecord:
        api = f"{text}\n\n<memory-context>\nrecalled: {text[:20]}\n</memory-context>" if recall else None
        return self.add("user", text, author="ada", api_content=api)

    def reply(self, text: str) -> MessageRecord:
        return self.add("assistant", text, author="scripted")

    def tool_step(self, outputs: list[str], *, text: str = "", name: str = "web_search") -> None:
        ids = []
        for _ in outputs:
            self.calls += 1
            ids.append(f"call_{self.calls}")
        calls = tuple({"id": i, "name": name, "arguments": {"q": f"query {i}"}} for i in ids)
        self.add("assistant", text, tool_calls=calls, author="scripted")
        for call_id, output in zip(ids, outputs, strict=True):
            self.add("tool", output, tool_call_id=call_id, tool_name=name)

    def extend(self, messages: list[NewMessage]) -> None:
        """Append rows as the child segment would store them (fresh ids, same fields)."""
        for message in messages:
            calls = tuple(message.tool_calls) if message.tool_calls is not None else None
            self.add(
                message.role,
                message.content,
                tool_calls=calls,
                tool_call_id=message.tool_call_id,
                tool_name=message.tool_name,
                author=message.author,
                api_content=message.api_content,
            )


_words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=60).map(lambda s: s.strip() or "x")
_outputs = st.one_of(
    _words,
    st.just(REPEATED_OUTPUT),
    st.integers(min_value=1_600, max_value=4_000).map(lambda n: "line one of a long output\n" + "z" * n),
    st.just(json.dumps({"success": False, "error": "tool web_search failed: TimeoutError"})),
)
_exchange = st.fixed_dictionaries(
    {
        "asks": st.lists(_words, min_size=1, max_size=3),
        "recall": st.booleans(),
        "steps": st.lists(st.lists(_outputs, min_size=1, max_size=3), max_size=3),
        "end": st.sampled_from(["reply", "reply", "failure", "note", "open"]),
        "reply": _words.map(lambda w: f"Answer: {w} " * 8),
    }
)


def build(exchanges: list[dict[str, Any]], transcript: Transcript | None = None) -> Transcript:
    """Turn drawn exchanges into rows; 'open' leaves the last exchange unanswered (a turn in progress)."""
    t = transcript or Transcript()
    for index, ex in enumerate(exchanges):
        for ask in ex["asks"]:
            t.user(ask, recall=ex["recall"])
        for outputs in ex["steps"]:
            t.tool_step(list(outputs))
        end = ex["end"]
        if end == "open" and index == len(exchanges) - 1:
            break
        if end == "failure":
            t.add("assistant", FAILURE_REPLY, author="mnemogate")
        else:
            t.reply(ex["reply"])
        if end == "note":
            t.add("system", "[note] the person switched platforms", author="mnemogate")
    return t


exchanges = st.lists(_exchange, min_size=1, max_size=14)
