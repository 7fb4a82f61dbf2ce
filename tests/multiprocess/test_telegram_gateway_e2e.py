"""End to end through ``mnemogate serve``: what a Telegram user sees, with the real adapter and model SDK.

The gateway polls the fake Bot API with python-telegram-bot and asks a fake OpenAI-compatible model (through
the real openai SDK) that echoes the user's words, or answers "long-reply" with a 10,000+ character Markdown
answer whose Python code block is longer than one Telegram message. Covered: a DM, group messages with and
without a mention, a reply to the bot without a mention, a forum topic, a re-delivered update, a long reply
in chunks, and flood control (429 with ``retry_after``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply
from agent_core.llm.fakes.script import FakeHTTPResponse, RecordedRequest
from tests.adapters.fakes.telegram_server import (
    TEXT_LIMIT,
    ApiAnswer,
    FakeTelegramServer,
    group_chat,
    private_chat,
    tg_user,
    utf16_len,
)
from tests.multiprocess.platform_config import (
    allowlist,
    openai_model,
    telegram_credentials,
    telegram_options,
    write_config,
)
from tests.multiprocess.serve_process import ServeProcess, serving, wait_until

Json = dict[str, Any]
ALICE = tg_user(4242, "Alice")
BOT_MENTION = "@mnemo_bot"
TEAM = group_chat(-100_4242, "Team")
FORUM = group_chat(-100_7777, "Forum", forum=True)
TOPIC = 77
LONG_TRIGGER = "long-reply"
# Non-BMP characters count twice in UTF-16, so a limit measured in characters would overflow.
CODE_LINES = [f'    rows.append("row {n:04d} 🙂 {"x" * 20}")' for n in range(220)]
LONG_REPLY = "\n\n".join(
    [
        "# The long answer",
        "Here is the whole script, then some notes about it. " * 20,
        "```python\ndef build() -> list[str]:\n    rows = []\n"
        + "\n".join(CODE_LINES)
        + "\n    return rows\n```",
        *(
            f"Note {n}: every row is appended in order, and nothing is lost on the way. " * 6
            for n in range(6)
        ),
    ]
)


def _user_texts(body: Json) -> str:
    """Every user message's text since the model last answered (what one turn is about)."""
    texts: list[str] = []
    for message in body.get("messages") or []:
        if message.get("role") == "assistant":
            texts.clear()
        elif message.get("role") == "user":
            content = message.get("content")
            parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content or []]
            texts.extend(str(part) for part in parts)
    return " | ".join(texts)


class EchoModel(FakeOpenAIServer):
    """Replies ``echo: <the user's words>``, or the long Markdown answer when asked for it."""

    def render(self, request: RecordedRequest, reply: FakeReply, serial: int) -> FakeHTTPResponse:
        asked = _user_texts(request.body)
        text = LONG_REPLY if LONG_TRIGGER in asked else f"echo: {asked}"
        return super().render(request, FakeReply(text=text), serial)


class Telegram:
    """The test's view of the fake Telegram: push what users say, read what the bot showed them."""

    def __init__(self, fake: FakeTelegramServer, gateway: ServeProcess) -> None:
        self.fake, self.gateway = fake, gateway

    def say(self, chat: Json, text: str, **options: Any) -> Json:
        update = self.fake.message_update(chat, ALICE, text, **options)
        self.fake.push(update)
        return update

    def replies(self, word: str) -> list[ApiAnswer]:
        """Messages the bot got shown to users that contain ``word``."""
        return [a for a in self.fake.answered("sendMessage") if word in str(a.result.get("text", ""))]

    def describe(self) -> str:
        sent = [
            (c.params.get("chat_id"), str(c.params.get("text"))[:80])
            for c in self.fake.calls_of("sendMessage")
        ]
        return f"{self.gateway.output()}\nsendMessage calls: {sent}"

    async def wait(self, condition: Callable[[], bool], what: str) -> None:
        await wait_until(condition, what, self.describe)

    async def reply_to(self, word: str) -> ApiAnswer:
        await self.wait(lambda: len(self.replies(word)) >= 1, f"the reply to {word!r}")
        return self.replies(word)[0]

    async def confirmed(self, update: Json) -> None:
        """Wait until the gateway confirmed ``update`` to Telegram (it was durably accepted)."""
        await self.wait(lambda: update["update_id"] not in self.fake.pending_update_ids, "confirmation")


@asynccontextmanager
async def _telegram_through_serve(tmp_path: Path) -> AsyncIterator[Telegram]:
    home = tmp_path / "home"
    async with FakeTelegramServer() as fake, EchoModel() as model:
        write_config(
            home,
            adapters={"telegram": telegram_options(fake)},
            access={"telegram": allowlist(ALICE["id"])},
            model=openai_model(model),
            queue={"drain_grace_s": 1},
        )
        async with serving(home, telegram_credentials(fake)) as gateway:
            yield Telegram(fake, gateway)
        assert fake.token not in gateway.output()


async def test_dms_groups_topics_and_redelivered_updates_are_answered_where_and_as_often_as_they_should(
    tmp_path: Path,
) -> None:
    async with _telegram_through_serve(tmp_path) as telegram:
        # A DM: one reply, in the DM, echoing the message.
        first = telegram.say(private_chat(ALICE), "hello dm-echo")
        dm = await telegram.reply_to("dm-echo")
        assert dm.call.params["chat_id"] == ALICE["id"] and "echo: " in dm.result["text"]

        # The same update delivered again after it was confirmed: still one reply.
        await telegram.confirmed(first)
        telegram.fake.push(first)
        telegram.say(private_chat(ALICE), "after-redelivery")
        await telegram.reply_to("after-redelivery")
        assert len(telegram.replies("dm-echo")) == 1

        # A group message without a mention is not answered; the addressed one after it is, in the group.
        quiet = telegram.say(TEAM, "group-chatter nobody asked the bot")
        await telegram.confirmed(quiet)  # the gateway took it (and decided) before the addressed one
        telegram.say(TEAM, f"{BOT_MENTION} group-question")
        addressed = await telegram.reply_to("group-question")
        assert addressed.call.params["chat_id"] == TEAM["id"]
        assert telegram.replies("group-chatter") == []

        # Replying to the bot's message in the group needs no mention.
        telegram.say(TEAM, "reply-without-mention", reply_to=addressed.result)
        reply = await telegram.reply_to("reply-without-mention")
        assert reply.call.params["chat_id"] == TEAM["id"]

        # A forum topic: the reply lands in the same topic.
        telegram.say(FORUM, f"{BOT_MENTION} topic-question", thread_id=TOPIC)
        topic = await telegram.reply_to("topic-question")
        assert topic.call.params["chat_id"] == FORUM["id"]
        assert topic.call.params.get("message_thread_id") == TOPIC
        assert topic.result.get("message_thread_id") == TOPIC

        # Nothing was answered twice and the quiet message never was: everything sent so far is accounted for.
        words = ["dm-echo", "after-redelivery", "group-question", "reply-without-mention", "topic-question"]
        assert [len(telegram.replies(word)) for word in words] == [1] * len(words)
        assert len(telegram.fake.answered("sendMessage")) == len(words)


_CODE_TAG = re.compile(r"<(/?)(pre|code)\b[^>]*>")


def _balanced_code_tags(html_text: str) -> bool:
    """Every ``<pre>``/``<code>`` in one message is closed in it, innermost first."""
    open_tags: list[str] = []
    for match in _CODE_TAG.finditer(html_text):
        closing, name = match.group(1) == "/", match.group(2)
        if not closing:
            open_tags.append(name)
        elif not open_tags or open_tags.pop() != name:
            return False
    return not open_tags


async def test_a_long_reply_arrives_in_whole_chunks_and_a_flood_wait_is_honoured(tmp_path: Path) -> None:
    async with _telegram_through_serve(tmp_path) as telegram:
        telegram.say(private_chat(ALICE), f"please give me the {LONG_TRIGGER}")
        await telegram.reply_to("Note 5:")  # the end of the long answer
        chunks = telegram.fake.answered("sendMessage")
        telegram.say(private_chat(ALICE), "after-long")  # a later reply: no chunk of the long one is pending
        await telegram.reply_to("after-long")
        assert telegram.fake.answered("sendMessage")[: len(chunks)] == chunks
        assert len(telegram.fake.answered("sendMessage")) == len(chunks) + 1
        assert len(chunks) >= 3, telegram.describe()
        for chunk in chunks:
            assert chunk.call.params["chat_id"] == ALICE["id"]
            assert chunk.call.params.get("parse_mode") == "HTML"  # never fell back to plain text
            assert utf16_len(chunk.result["text"]) <= TEXT_LIMIT
            assert utf16_len(str(chunk.call.params["text"])) <= TEXT_LIMIT
            assert _balanced_code_tags(str(chunk.call.params["text"])), chunk.call.params["text"]
        ids = [chunk.result["message_id"] for chunk in chunks]
        assert ids == sorted(ids)
        shown = "\n".join(chunk.result["text"] for chunk in chunks)
        assert utf16_len(shown) > 10_000
        positions = [shown.find(line.strip()) for line in CODE_LINES]
        assert -1 not in positions and positions == sorted(positions)  # every line of code, in order
        with_code = [c for c in chunks if any(line.strip() in c.result["text"] for line in CODE_LINES)]
        assert len(with_code) >= 2  # the block really was split, and reopened as Python in each part
        assert all('<pre><code class="language-python">' in str(c.call.params["text"]) for c in with_code)
        assert "The long answer" in chunks[0].result["text"] and "Note 5:" in chunks[-1].result["text"]

        # Flood control: the first attempt gets a 429; the reply arrives once, after retry_after.
        telegram.fake.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
        telegram.say(private_chat(ALICE), "flood-wait")
        answered = await telegram.reply_to("flood-wait")
        telegram.say(private_chat(ALICE), "after-flood")
        await telegram.reply_to("after-flood")
        attempts = [
            c for c in telegram.fake.calls_of("sendMessage") if "flood-wait" in str(c.params.get("text"))
        ]
        assert len(attempts) == 2 and attempts[1] is answered.call, telegram.describe()
        assert answered.call.at - attempts[0].at >= 1.0
        assert len(telegram.replies("flood-wait")) == 1
