"""Finished streams wait for their own turn's reply: a late reply never edits the next turn's stream."""

from __future__ import annotations

import time

from gateway.delivery import StreamedMessage, StreamRegistry

CHAT = '{"chat_id":"42","kind":"dm","platform":"telegram"}'


def streamed(message_id: str) -> StreamedMessage:
    return StreamedMessage(CHAT, message_id, f"text of {message_id}", time.time())


def test_each_reply_takes_the_stream_of_the_message_it_answers() -> None:
    streams = StreamRegistry()
    # Turn 1 answered message "u1" and its reply is not delivered yet when turn 2 (answering "u2") streams.
    streams.put("cv_1", "u1", streamed("m1"))
    streams.put("cv_1", "u2", streamed("m2"))
    late = streams.take("cv_1", CHAT, "u1")
    assert late is not None and late.platform_message_id == "m1"
    assert streams.take("cv_1", CHAT, "u1") is None  # taken once
    current = streams.take("cv_1", CHAT, "u2")
    assert current is not None and current.platform_message_id == "m2"


def test_a_turn_run_again_forgets_only_its_own_earlier_stream() -> None:
    streams = StreamRegistry()
    streams.put("cv_1", "u1", streamed("m1"))
    streams.put("cv_1", "u2", streamed("m2"))
    streams.discard("cv_1", "u2")  # "u2" is answered again after a lost lease
    assert streams.take("cv_1", CHAT, "u2") is None
    assert streams.take("cv_1", CHAT, "u1") is not None
