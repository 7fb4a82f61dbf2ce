"""End to end through ``mnemogate serve``: a user on the fake Discord, the real adapter, a scripted model.

The model echoes the user's text (so every reply can be matched to its message) or, asked for a
"long-reply", answers 10,000+ characters of Markdown around a code block longer than one Discord message.
What is checked is what a user would see in Discord: a DM answered once in the DM; a guild channel
answered only when the bot is mentioned or replied to; a thread answered in that thread, and a thread the
bot opened (``auto_thread``) followed without a mention; a long answer in ordered chunks of at most 2,000
characters, each with balanced code fences; a 429 waited out in full; a MESSAGE_CREATE dispatched twice
answered once; messages sent back to back shown to the model in the order written.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply, RecordedRequest
from agent_core.llm.fakes.script import FakeHTTPResponse
from tests.adapters.fakes.discord_server import Call, FakeDiscordServer, user_payload
from tests.multiprocess.platform_config import (
    allowlist,
    discord_credentials,
    discord_options,
    openai_model,
    write_config,
)
from tests.multiprocess.serve_process import ServeProcess, serving, wait_until

ALICE = user_payload(5001, "alice")
ALICE_DM = 610000000000005001
# Users who each send a burst of messages in their own DM (a conversation each), for the ordering test.
BURSTS = {610000000000006000 + n: user_payload(6000 + n, f"burst{n}") for n in range(8)}
BURST_LENGTH = 5
LIMIT = 2000
LONG = "long-reply"
CODE_LINES = [f"    total = total + step({n:04d})  # line {n:04d} of the listing" for n in range(160)]
PROSE = [
    f"Paragraph {n} explains the listing in plain words, one careful step after another." for n in range(60)
]
LONG_ANSWER = "\n\n".join(
    ["Here is the whole program.", *PROSE[:30], "```python\ndef run(total):\n" + "\n".join(CODE_LINES)
     + "\n    return total\n```", *PROSE[30:], "That is all."]
)  # fmt: skip
_FENCE = re.compile(r"(?<!\\)```")


class EchoModel(FakeOpenAIServer):
    """An OpenAI-compatible model whose answer depends on what the user said since its last answer."""

    def render(self, request: RecordedRequest, reply: FakeReply, serial: int) -> FakeHTTPResponse:
        said = _unanswered_text(request.body)
        answer = LONG_ANSWER if LONG in said else f"echo: {said}"
        return super().render(request, FakeReply(text=answer, chunks=reply.chunks), serial)


def _unanswered_text(body: dict[str, object]) -> str:
    """Every user message after the model's last answer: messages that waited together share one turn, and
    the echo must show each of them (an unaddressed message slipping into a turn is then visible)."""
    messages = body.get("messages")
    turn: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant":
            turn = []
        elif role == "user":
            turn.append(_text_of(message.get("content", "")))
    return " | ".join(turn)


def _text_of(content: object) -> str:
    if isinstance(content, list):  # content parts
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content).split("<memory-context>")[0].strip()  # recall is appended after the user's text


@dataclass
class World:
    """The fake Discord, the model and one running gateway, with what the bot said where."""

    fake: FakeDiscordServer
    model: EchoModel
    gateway: ServeProcess

    def said_in(self, channel_id: int) -> list[Call]:
        """The bot's messages Discord accepted in ``channel_id``, in order."""
        return [call for call in self.fake.accepted("create_message") if call.channel_id == channel_id]

    def answers(self, word: str, channel_id: int | None = None) -> list[Call]:
        """The bot's accepted messages echoing ``word`` (anywhere, or only in ``channel_id``)."""
        return [
            call
            for call in self.fake.accepted("create_message")
            if word in str(call.body.get("content", "")) and channel_id in (None, call.channel_id)
        ]

    def describe(self) -> str:
        sent = [
            (c.channel_id, str(c.body.get("content", ""))[:80]) for c in self.fake.calls_to("create_message")
        ]
        return f"{self.gateway.output()}\nsent: {sent}"

    async def wait(self, condition: Callable[[], bool], what: str) -> None:
        await wait_until(condition, what, self.describe)

    async def answered(self, word: str, channel_id: int) -> Call:
        """Wait for the one reply echoing ``word`` in ``channel_id``."""
        await self.wait(
            lambda: bool(self.answers(word, channel_id)), f"the reply to {word!r} in {channel_id}"
        )
        [reply] = self.answers(word)
        return reply


@asynccontextmanager
async def running(tmp_path: Path, *, auto_thread: bool = False) -> AsyncIterator[World]:
    home = tmp_path / "home"
    async with FakeDiscordServer(announce_threads=True) as fake, EchoModel() as model:
        write_config(
            home,
            adapters={"discord": discord_options(fake, auto_thread=auto_thread)},
            access={"discord": allowlist(ALICE["id"], *(user["id"] for user in BURSTS.values()))},
            model=openai_model(model),
            queue={"drain_grace_s": 0.5},
        )
        async with serving(home, discord_credentials(fake)) as gateway:
            yield World(fake, model, gateway)
        assert fake.token not in gateway.output()


async def test_dms_and_channels_are_answered_in_place_only_when_addressed_and_a_double_delivery_once(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as world:
        fake = world.fake
        await fake.post(fake.message(ALICE, "dm-hello", channel_id=ALICE_DM, guild=False))
        assert "echo: dm-hello" in str((await world.answered("dm-hello", ALICE_DM)).body["content"])
        assert len(world.said_in(ALICE_DM)) == 1

        # Unaddressed, then addressed in the same channel: once the second is answered, the first never was.
        await fake.post(fake.message(ALICE, "quiet-channel"))
        await fake.post(fake.message(ALICE, "loud-channel", mention_bot=True))
        await world.answered("loud-channel", fake.channel_id)
        assert not world.answers("quiet-channel")
        # A reply to the bot's message needs no mention.
        [bot_message] = [kept for kept in fake.channel_log[fake.channel_id] if kept["author"]["bot"]]
        await fake.post(fake.message(ALICE, "reply-to-bot", reply_to=bot_message))
        await world.answered("reply-to-bot", fake.channel_id)

        # The same MESSAGE_CREATE dispatched twice back to back, and once more after the answer.
        twice = fake.message(ALICE, "said-twice", channel_id=ALICE_DM, guild=False)
        await fake.post(twice)
        await fake.post(twice)
        await world.answered("said-twice", ALICE_DM)
        await fake.post(twice)
        await fake.post(fake.message(ALICE, "said-next", channel_id=ALICE_DM, guild=False))
        await world.answered("said-next", ALICE_DM)
        assert len(world.answers("said-twice")) == 1
        assert len(world.said_in(ALICE_DM)) == 3


async def test_a_10000_character_answer_arrives_in_ordered_chunks_and_a_429_is_waited_out_in_full(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as world:
        fake = world.fake
        await fake.post(fake.message(ALICE, f"{LONG} please", mention_bot=True))
        await world.wait(
            lambda: any("That is all." in str(c.body["content"]) for c in world.said_in(fake.channel_id)),
            "the last chunk of the long answer",
        )
        chunks = [str(call.body["content"]) for call in world.said_in(fake.channel_id)]
        assert not fake.refused, world.describe()
        assert len(LONG_ANSWER) >= 10_000 and len(chunks) >= 6
        assert all(len(chunk) <= LIMIT for chunk in chunks)
        assert all(len(_FENCE.findall(chunk)) % 2 == 0 for chunk in chunks)
        assert _code_lines(chunks) == ["def run(total):", *CODE_LINES, "    return total"]
        assert len([chunk for chunk in chunks if "```python" in chunk]) >= 2  # the block spans chunks
        whole = "\n".join(chunks)
        positions = [whole.index(paragraph) for paragraph in [*PROSE, "That is all."]]
        assert positions == sorted(positions)

        fake.rate_limit_next("create_message", retry_after=1.0)
        await fake.post(fake.message(ALICE, "slow-down", channel_id=ALICE_DM, guild=False))
        reply = await world.answered("slow-down", ALICE_DM)
        [limited] = fake.refused
        assert limited.channel_id == ALICE_DM and "slow-down" in str(limited.body["content"])
        assert reply.at - limited.at >= 1.0
        await fake.post(fake.message(ALICE, "after-wait", channel_id=ALICE_DM, guild=False))
        await world.answered("after-wait", ALICE_DM)
        assert len(world.answers("slow-down")) == 1


def _code_lines(chunks: list[str]) -> list[str]:
    """The lines inside code fences, across every chunk in order (fence lines themselves left out)."""
    lines: list[str] = []
    for chunk in chunks:
        inside = False
        for line in chunk.split("\n"):
            if _FENCE.match(line):
                inside = not inside
            elif inside:
                lines.append(line)
    return lines


async def test_threads_are_answered_in_the_thread_and_a_thread_the_bot_opened_needs_no_mention(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, auto_thread=True) as world:
        fake = world.fake
        # A thread someone else opened: only a mention is answered, and in that thread.
        await fake.post(fake.message(ALICE, "quiet-thread", channel_id=fake.thread_id))
        await fake.post(fake.message(ALICE, "loud-thread", channel_id=fake.thread_id, mention_bot=True))
        await world.answered("loud-thread", fake.thread_id)
        assert not world.answers("quiet-thread")

        # A top-level mention opens a thread on it (Discord gives it the message's id); answered there.
        mention = fake.message(ALICE, "open-thread", mention_bot=True)
        await fake.post(mention)
        opened = int(mention["id"])
        await world.answered("open-thread", opened)
        assert [call.channel_id for call in fake.calls_to("start_thread")] == [fake.channel_id]
        assert world.said_in(fake.channel_id) == []
        # The bot took part in its own thread: a follow-up there is answered without a mention.
        await fake.post(fake.message(ALICE, "follow-up", channel_id=opened))
        await world.answered("follow-up", opened)
        assert len(world.said_in(opened)) == 2


async def test_messages_sent_back_to_back_reach_the_model_in_the_order_they_were_sent(tmp_path: Path) -> None:
    async with running(tmp_path) as world:
        fake = world.fake
        for channel_id, user in BURSTS.items():
            for n in range(BURST_LENGTH):
                await fake.post(
                    fake.message(user, f"{user['username']}-part{n}.", channel_id=channel_id, guild=False)
                )
        words = [f"{user['username']}-part{n}." for user in BURSTS.values() for n in range(BURST_LENGTH)]
        await world.wait(lambda: all(world.answers(word) for word in words), "an answer to every message")
        # Whether a burst shares one turn or several, the echoes read in the order the user wrote.
        heard = {
            channel_id: [
                int(n)
                for n in re.findall(
                    r"-part(\d)\.", " ".join(str(c.body["content"]) for c in world.said_in(channel_id))
                )
            ]
            for channel_id in BURSTS
        }
        assert heard == {channel_id: list(range(BURST_LENGTH)) for channel_id in BURSTS}
