"""End to end through ``mnemogate serve``: what a Slack user sees from the real adapter against a fake Slack.

The test plays Slack (signed Events API deliveries to the gateway's route) and a scripted OpenAI-compatible
model that echoes the user's text (or, for the trigger word ``long-reply``, writes a 10,000+ character
Markdown answer around a long fenced code block). It checks, at the fake Slack's Web API: a DM is answered
once in the DM; a channel message without a mention is never answered, a mention is answered in a new
thread under it; a mention inside a thread is answered in that thread and a plain follow-up in a thread the
bot took part in is answered too; a re-delivered event (``X-Slack-Retry-Num``) is answered once; a long
reply arrives as ordered chunks within Slack's per-message limit with balanced code fences; a 429 with
``Retry-After`` delays the reply by at least that long and it still arrives exactly once.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.slack.render import SLACK_CHUNK_LIMIT
from agent_core.llm.fakes import FakeHTTPResponse, FakeOpenAIServer, FakeReply, RecordedRequest
from tests.adapters.fakes.slack_server import ApiCall, FakeSlackServer, slack_mrkdwn_text
from tests.multiprocess.platform_config import (
    allowlist,
    openai_model,
    slack_credentials,
    slack_options,
    write_config,
)
from tests.multiprocess.serve_process import ServeProcess, serving, wait_until
from tests.multiprocess.slack_world import SECRET, dm_channel, post_event

ALICE, BOB = "UALICE", "UBOB"
GENERAL = "C0GENERAL"
LONG_TRIGGER = "long-reply"
CODE_LINES = [f"value_{n:03d} = compute({n}) if a < b and c > d else None  # step {n}" for n in range(200)]
RETRY_AFTER_S = 2  # not 1: the adapter falls back to 1 s when Slack sends no Retry-After


def _long_answer() -> str:
    prose = "\n\n".join(
        f"Paragraph {n}: the explanation goes on for a while so that the answer is long." for n in range(40)
    )
    code = "\n".join(CODE_LINES)
    return f"# A long answer\n\n{prose}\n\n```python\n{code}\n```\n\nThat is all, {LONG_TRIGGER} done."


class EchoModel(FakeOpenAIServer):
    """A fake OpenAI model replying ``echo: <the user's last message>``, or the long answer on its trigger."""

    def render(self, request: RecordedRequest, reply: FakeReply, serial: int) -> FakeHTTPResponse:
        return super().render(request, FakeReply(text=self.answer_to(request)), serial)

    @staticmethod
    def answer_to(request: RecordedRequest) -> str:
        messages = request.body.get("messages")
        users = (
            [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
            if isinstance(messages, list)
            else []
        )
        content = users[-1].get("content", "") if users else ""
        if isinstance(content, list):
            content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        text = str(content)
        return _long_answer() if LONG_TRIGGER in text else f"echo: {text}"


@dataclass
class World:
    """One running gateway, the fake Slack it talks to, and the model behind it."""

    gateway: ServeProcess
    fake: FakeSlackServer
    model: EchoModel

    async def deliver(self, body: dict[str, Any], *, retry: int = 0) -> None:
        """POST ``body`` signed like Slack (``retry`` > 0: Slack's re-delivery); require a 2xx."""
        answer = await post_event(self.gateway, body, retry=retry, reason="http_timeout")
        assert answer.is_success, f"{answer.status_code} {answer.text}\n{self.gateway.output()}"

    async def say(self, event: dict[str, Any]) -> dict[str, Any]:
        body = self.fake.event_body(event)
        await self.deliver(body)
        return body

    async def mention(self, channel: str, user: str, text: str, *, thread_ts: str | None = None) -> str:
        """What Slack sends for a mention in a channel: the ``message`` and its ``app_mention`` twin."""
        mention = self.fake.mention(channel, user, text, thread_ts=thread_ts)
        twin = self.fake.message(channel, user, mention["text"], thread_ts=thread_ts, ts=mention["ts"])
        await self.say(twin)
        await self.say(mention)
        return str(mention["ts"])

    def posts(self) -> list[ApiCall]:
        """The messages Slack accepted from the bot, in the order they were sent."""
        return self.fake.accepted_calls_of("chat.postMessage")

    def replies(self, word: str) -> list[dict[str, Any]]:
        """The bot's messages that contain ``word`` as a whole word (``a-word`` does not match ``word``)."""
        whole = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")
        return [dict(post.params) for post in self.posts() if whole.search(str(post.params.get("text", "")))]

    async def wait(self, condition: Callable[[], bool], what: str) -> None:
        await wait_until(
            condition, what, lambda: f"{self.gateway.output()}\n{[dict(c.params) for c in self.fake.calls]}"
        )

    async def reply_to(self, word: str) -> dict[str, Any]:
        """The one reply echoing ``word``, once it arrived."""
        await self.wait(lambda: len(self.replies(word)) >= 1, f"the reply to {word!r}")
        (reply,) = self.replies(word)
        return reply


@asynccontextmanager
async def _world(tmp_path: Path) -> AsyncIterator[World]:
    home = tmp_path / "home"
    async with FakeSlackServer() as fake, EchoModel() as model:
        write_config(
            home,
            adapters={"slack": slack_options(fake)},
            access={"slack": allowlist(ALICE, BOB)},
            model=openai_model(model),
        )
        async with serving(home, slack_credentials(fake, SECRET)) as gateway:
            yield World(gateway, fake, model)
        assert SECRET not in gateway.output() and fake.bot_token not in gateway.output()


async def test_dms_channels_and_threads_are_answered_where_the_user_expects_and_only_when_addressed(
    tmp_path: Path,
) -> None:
    async with _world(tmp_path) as world:
        fake = world.fake
        # A DM: one reply, in the DM, echoing the text.
        dm = await world.say(fake.message(dm_channel(ALICE), ALICE, "dm-hello"))
        reply = await world.reply_to("dm-hello")
        assert reply["channel"] == dm_channel(ALICE) and not reply.get("thread_ts")

        # Slack re-delivers an event it thinks went unanswered, even twice at once: still one reply.
        await asyncio.gather(world.deliver(dm, retry=1), world.deliver(dm, retry=2))
        await world.say(fake.message(dm_channel(ALICE), ALICE, "dm-after-duplicate"))
        await world.reply_to("dm-after-duplicate")
        assert len(world.replies("dm-hello")) == 1

        # A channel message without a mention is not for the bot; a mention is answered in a thread under it.
        parent = fake.message(GENERAL, BOB, "channel-unaddressed")
        await world.say(parent)
        mention_ts = await world.mention(GENERAL, ALICE, "channel-mention")
        reply = await world.reply_to("channel-mention")
        assert (reply["channel"], reply.get("thread_ts")) == (GENERAL, mention_ts)

        # A plain follow-up in the thread the bot answered in is for the bot: answered in that thread.
        await world.say(fake.message(GENERAL, ALICE, "bot-thread-follow-up", thread_ts=mention_ts))
        reply = await world.reply_to("bot-thread-follow-up")
        assert (reply["channel"], reply.get("thread_ts")) == (GENERAL, mention_ts)

        # A people-only thread: a plain reply there is not answered; a mention there is, in the same thread.
        thread_ts = str(parent["ts"])
        await world.say(fake.message(GENERAL, BOB, "thread-unaddressed", thread_ts=thread_ts))
        await world.mention(GENERAL, ALICE, "thread-mention", thread_ts=thread_ts)
        reply = await world.reply_to("thread-mention")
        assert (reply["channel"], reply.get("thread_ts")) == (GENERAL, thread_ts)
        await world.say(fake.message(GENERAL, BOB, "people-thread-follow-up", thread_ts=thread_ts))
        reply = await world.reply_to("people-thread-follow-up")
        assert (reply["channel"], reply.get("thread_ts")) == (GENERAL, thread_ts)

        # Everything after them was answered, so the unaddressed messages were seen and left alone.
        assert world.replies("channel-unaddressed") == [] and world.replies("thread-unaddressed") == []
        assert all(len(world.replies(word)) == 1 for word in ("channel-mention", "thread-mention"))
        assert len(world.posts()) == 6, [dict(post.params) for post in world.posts()]


_FENCE = re.compile(r"^```$", re.MULTILINE)


async def test_a_long_reply_is_chunked_with_fences_intact_and_a_429_delays_a_reply_by_its_retry_after(
    tmp_path: Path,
) -> None:
    async with _world(tmp_path) as world:
        fake = world.fake
        # The long answer: several messages, each within Slack's limit, in order, each a complete mrkdwn.
        await world.say(fake.message(dm_channel(ALICE), ALICE, f"please give me a {LONG_TRIGGER}"))
        await world.wait(lambda: len(world.replies(f"{LONG_TRIGGER} done")) == 1, "the end of the long reply")
        chunks = [str(post.params["text"]) for post in world.posts()]
        assert len(chunks) >= 3 and sum(map(len, chunks)) >= 10_000
        assert all(len(chunk) <= SLACK_CHUNK_LIMIT for chunk in chunks), [len(c) for c in chunks]
        assert all(post.params["channel"] == dm_channel(ALICE) for post in world.posts())
        assert all(len(_FENCE.findall(chunk)) % 2 == 0 for chunk in chunks)
        code_chunks = [chunk for chunk in chunks if "value_" in chunk]
        assert len(code_chunks) >= 2, "the code block is longer than one message"
        visible = [slack_mrkdwn_text(chunk) for chunk in chunks]  # also: every chunk is valid mrkdwn
        shown_code = [line for text in visible for line in text.split("\n") if line.startswith("value_")]
        assert shown_code == CODE_LINES
        assert visible[0].startswith("*A long answer*") and visible[-1].endswith(f"{LONG_TRIGGER} done.")

        # Slack answers the reply's first post with 429 + Retry-After: the reply comes once, after the wait.
        fake.fail_next("chat.postMessage", "ratelimited", status=429, retry_after=RETRY_AFTER_S)
        await world.say(fake.message(dm_channel(BOB), BOB, "rate-limited-hello"))
        reply = await world.reply_to("rate-limited-hello")
        assert reply["channel"] == dm_channel(BOB)
        (limited,) = fake.rejected
        (sent,) = [post for post in world.posts() if "rate-limited-hello" in str(post.params["text"])]
        assert "rate-limited-hello" in str(limited.params["text"])
        assert sent.at - limited.at >= RETRY_AFTER_S, sent.at - limited.at
        await world.say(fake.message(dm_channel(BOB), BOB, "after-the-limit"))
        await world.reply_to("after-the-limit")
        assert len(world.replies("rate-limited-hello")) == 1
