"""Pure conversion rules that the recorded contract payloads do not show on their own."""

from __future__ import annotations

from collections.abc import Mapping

from adapters.slack import BotIdentity, event_to_inbound
from gateway.contracts import ChatKind

BOT = BotIdentity("UBOT", "BBOT")


def body(event: Mapping[str, object], team: str = "T1") -> dict[str, object]:
    return {"type": "event_callback", "team_id": team, "event_id": "Ev1", "event": event}


def test_a_reply_in_a_thread_the_bot_takes_part_in_is_a_reply_to_the_bot() -> None:
    event = {"type": "message", "channel": "C1", "channel_type": "channel", "user": "U1", "text": "and?",
             "ts": "2.0", "thread_ts": "1.0"}  # fmt: skip
    joined = event_to_inbound(body(event), BOT, joined_threads={("T1", "C1", "1.0")})
    stranger = event_to_inbound(body(event), BOT, joined_threads={("T2", "C1", "1.0")})
    assert joined is not None and joined.replies_to_bot
    assert stranger is not None and not stranger.replies_to_bot  # same ids in another workspace


def test_a_top_level_mention_stays_in_the_channel_when_threading_is_off() -> None:
    event = {"type": "app_mention", "channel": "G1", "user": "U1", "text": "<@UBOT> hi", "ts": "3.0"}
    threaded = event_to_inbound(body(event), BOT)
    flat = event_to_inbound(body(event), BOT, reply_in_thread=False)
    assert threaded is not None and (threaded.chat.kind, threaded.chat.thread_id) == (ChatKind.THREAD, "3.0")
    assert flat is not None and (flat.chat.kind, flat.chat.thread_id) == (ChatKind.GROUP, None)
    assert flat.text == "hi" and flat.mentions_bot


def test_non_message_events_and_malformed_bodies_yield_nothing() -> None:
    assert event_to_inbound(body({"type": "reaction_added", "user": "U1"}), BOT) is None
    assert event_to_inbound({"type": "url_verification", "challenge": "x"}, BOT) is None
    assert event_to_inbound(body({"type": "message", "channel": "C1", "ts": "1.0"}), BOT) is None
