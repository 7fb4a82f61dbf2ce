"""The inbound pipeline: bots ignored, unknown users refused or paired, rate limits, session keys."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gateway.access import NOT_ALLOWED
from gateway.contracts import ChatKind, InboundMessage
from gateway.storage.chat_refs import chat_to_text

from ..delivery.recording_adapter import dm
from ..queue.harness import backbone, open_config


def in_group(
    text: str, user: str, event: str, *, thread: str | None = None, mentions_bot: bool = True
) -> InboundMessage:
    kind = ChatKind.GROUP if thread is None else ChatKind.THREAD
    return dm(
        text, user=user, event=event, chat_id="g1", kind=kind, thread_id=thread, mentions_bot=mentions_bot
    )


async def test_group_chatter_not_addressed_to_the_bot_gets_no_turn_and_no_refusal(home: Path) -> None:
    async with backbone(home) as b:
        chatter = await b.gateway.pipeline.process(in_group("lunch?", "ada", "e1", mentions_bot=False))
        topic = await b.gateway.pipeline.process(in_group("ok", "ada", "e2", thread="t1", mentions_bot=False))
        stranger = await b.gateway.pipeline.process(in_group("hey", "mallory", "e3", mentions_bot=False))
        assert [chatter.reason, topic.reason, stranger.reason] == ["unaddressed"] * 3
        assert await b.jobs() == []
        asked = await b.gateway.pipeline.process(in_group("@bot lunch?", "ada", "e4"))
        assert asked.reason == "queued"
        assert len(await b.jobs()) == 1
        assert await b.wait_sent(1)  # answered


async def test_an_unknown_user_is_refused_once_and_never_gets_a_turn(home: Path) -> None:
    async with backbone(home, config={}) as b:
        first = await b.gateway.pipeline.process(dm("hi", user="mallory", event="e1"))
        second = await b.gateway.pipeline.process(dm("hi again", user="mallory", event="e2"))
        assert (first.reason, second.reason) == ("denied", "denied")
        assert await b.wait_sent(1) == [NOT_ALLOWED]
        assert await b.jobs() == []
        assert b.adapter.texts() == [NOT_ALLOWED]


async def test_with_pairing_on_an_unknown_user_gets_a_pairing_code(home: Path) -> None:
    async with backbone(home, config={"access": {"test": {"pairing": True}}}) as b:
        await b.gateway.pipeline.process(dm("hi", user="newbie", event="e1"))
        (notice,) = await b.wait_sent(1)
        pending = await b.gateway.access.pairing.list_pending()
        assert len(pending) == 1 and pending[0].code in notice
        assert await b.jobs() == []


async def test_an_allowlisted_user_is_answered(home: Path) -> None:
    async with backbone(home, config={"access": {"test": {"allow": ["ada"]}}}) as b:
        outcome = await b.gateway.pipeline.process(dm("hello", user="ada", event="e1"))
        assert outcome.reason == "queued"
        assert await b.wait_sent(1) == ["echo: hello"]


async def test_bots_including_ourselves_are_ignored(home: Path) -> None:
    async with backbone(home) as b:
        outcome = await b.gateway.pipeline.process(dm("beep", user="otherbot", event="e1", is_bot=True))
        assert outcome.reason == "bot"
        assert await b.jobs() == []


async def test_over_the_rate_limit_a_person_gets_one_polite_notice(home: Path) -> None:
    config = open_config(rate_limit={"capacity": 1, "refill_s": 3600})
    async with backbone(home, config=config) as b:
        reasons = [(await b.gateway.pipeline.process(dm(f"m{n}", event=f"e{n}"))).reason for n in range(3)]
        assert reasons == ["queued", "rate_limited", "rate_limited"]
        sent = await b.wait_sent(2)
        assert len(sent) == 2 and "echo: m0" in sent
        assert len(await b.jobs()) == 1


async def test_a_plain_group_has_one_conversation_per_user_and_a_thread_one_shared(home: Path) -> None:
    async with backbone(home) as b:
        a = await b.gateway.pipeline.process(in_group("from ada", "ada", "e1"))
        c = await b.gateway.pipeline.process(in_group("from cy", "cy", "e2"))
        assert a.conversation_id != c.conversation_id
        t1 = await b.gateway.pipeline.process(in_group("in thread", "ada", "e3", thread="t9"))
        t2 = await b.gateway.pipeline.process(in_group("me too", "cy", "e4", thread="t9"))
        assert t1.conversation_id == t2.conversation_id
        assert t1.conversation_id not in (a.conversation_id, c.conversation_id)


async def test_group_scope_is_configurable_per_platform(home: Path) -> None:
    config = open_config(sessions={"platforms": {"test": {"group": "shared"}}})
    async with backbone(home, config=config) as b:
        a = await b.gateway.pipeline.process(in_group("from ada", "ada", "e1"))
        c = await b.gateway.pipeline.process(in_group("from cy", "cy", "e2"))
        assert a.conversation_id == c.conversation_id


def _waiting(text: str, event: str) -> InboundMessage:
    """A message whose sender waits on the hand-off (the web chat's or the API's HTTP request)."""
    return replace(dm(text, event=event), caller_waits=True)


async def test_a_refused_message_whose_sender_waits_is_returned_to_it_and_not_stored(home: Path) -> None:
    config = open_config(rate_limit={"capacity": 1, "refill_s": 3600})
    async with backbone(home, config=config) as b:
        first = await b.gateway.pipeline.handle(_waiting("m0", "e0"))
        refused = await b.gateway.pipeline.handle(_waiting("m1", "e1"))
        retried = await b.gateway.pipeline.handle(_waiting("m1", "e1"))
        assert await b.wait_sent(1) == ["echo: m0"]
        recorded = [event for event in ("e0", "e1") if await b.queue.seen("test", event)]
        notices = await b.gateway.outbox.repository.chat_notices(
            chat_to_text(dm("", event="-").chat), since=0
        )
    assert first.accepted and not refused.accepted
    assert refused.reason == "rate_limited" and (refused.retry_after_s or 0) > 0 and refused.notice
    assert retried.reason == "rate_limited"  # judged again, not taken for a duplicate of a stored event
    assert recorded == ["e0"] and notices == ()


async def test_a_denied_sender_who_waits_gets_the_refusal_in_the_outcome(home: Path) -> None:
    async with backbone(home, config={}) as b:
        waiting = _waiting("hi", "e1")
        outcome = await b.gateway.pipeline.handle(waiting)
        notices = await b.gateway.outbox.repository.chat_notices(chat_to_text(waiting.chat), since=0)
        jobs = await b.jobs()
    assert (outcome.accepted, outcome.reason, outcome.notice) == (False, "denied", NOT_ALLOWED)
    assert notices == () and jobs == []
