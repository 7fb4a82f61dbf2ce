"""End to end through ``mnemogate serve``: the real Slack adapter (Events API over HTTP) against a fake Slack.

The test plays Slack: it posts signed event deliveries to the gateway's events route and, like Slack, delivers
again (with ``X-Slack-Retry-Num``) every one that got no 2xx. A DM gets the offline model's reply; a
re-delivered event is answered once; a gateway stopped (SIGTERM or kill -9) while messages wait answers every
one of them after its restart, none twice, and still follows the threads it took part in before.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply
from tests.adapters.fakes.slack_server import FakeSlackServer
from tests.multiprocess.platform_config import (
    allowlist,
    openai_model,
    slack_credentials,
    slack_options,
    write_config,
)
from tests.multiprocess.serve_process import EACH_STOP_SIGNAL, ServeProcess, serving, wait_until
from tests.multiprocess.slack_world import SECRET, dm_channel, post_event

ALICE = "UALICE"
GENERAL = "C0GENERAL"
# One user (and DM channel) per message in the restart tests: each is its own conversation, so each gets
# exactly one reply (messages of one conversation that wait together are answered by one turn).
CONCURRENCY = 2
WORDS = ["thread", "before-0", "before-1", *(f"acked-{n}" for n in range(CONCURRENCY + 2)), "racing-stop",
         "down-0", "down-1", "last"]  # fmt: skip
USERS = {word: f"U{n:04d}" for n, word in enumerate(WORDS)}
ANSWER = FakeReply(text="the answer")
THINKING = FakeReply(text="too late", delay_s=30)


def _write_config(home: Path, fake: FakeSlackServer, model: FakeOpenAIServer | None = None) -> None:
    write_config(
        home,
        adapters={"slack": slack_options(fake)},
        access={"slack": allowlist(ALICE, *USERS.values())},
        model=None if model is None else openai_model(model),  # one that can be told to think for long
        queue={"concurrency": CONCURRENCY, "drain_grace_s": 0.5, "lease_s": 2},
    )


class Slack:
    """Slack's side of the Events API: signed deliveries, and again for each one no attempt got a 2xx for."""

    def __init__(self, fake: FakeSlackServer) -> None:
        self.fake = fake
        self.attempts: dict[str, int] = {}
        self.unacked: dict[str, dict[str, Any]] = {}
        self.answers: list[str] = []  # what each attempt got, for failure reports

    async def deliver(self, gateway: ServeProcess, body: dict[str, Any]) -> bool:
        event_id = str(body["event_id"])
        retry = self.attempts.get(event_id, 0)
        self.attempts[event_id] = retry + 1
        try:
            answer = await post_event(gateway, body, retry=retry, reason="http_error")
        except httpx.HTTPError as exc:  # connection refused or reset while the gateway is down or stopping
            acked = False
            self.answers.append(f"{event_id}: {type(exc).__name__}")
        else:
            acked = answer.is_success
            self.answers.append(f"{event_id}: {answer.status_code} {answer.text[:200]}")
        if acked:
            self.unacked.pop(event_id, None)
        else:
            self.unacked[event_id] = body
        return acked

    async def ack(self, gateway: ServeProcess, body: dict[str, Any]) -> None:
        """Deliver ``body`` and require the gateway's 2xx."""
        if not await self.deliver(gateway, body):
            raise AssertionError(f"not acked: {self.answers[-1]}\n{gateway.output()}")

    async def redeliver(self, gateway: ServeProcess) -> None:
        for body in list(self.unacked.values()):
            await self.deliver(gateway, body)

    def dm(self, word: str) -> dict[str, Any]:
        user = USERS.get(word, ALICE)
        return self.fake.event_body(self.fake.message(dm_channel(user), user, word))

    async def say(self, gateway: ServeProcess, word: str) -> bool:
        return await self.deliver(gateway, self.dm(word))


def _posts(fake: FakeSlackServer) -> list[dict[str, Any]]:
    return [dict(call.params) for call in fake.calls_of("chat.postMessage")]


def _replies(fake: FakeSlackServer, word: str) -> int:
    return sum(1 for post in _posts(fake) if word in str(post.get("text", "")))


def _replies_to(fake: FakeSlackServer, word: str) -> int:
    return sum(1 for post in _posts(fake) if post.get("channel") == dm_channel(USERS[word]))


async def _wait(
    condition: Callable[[], bool], what: str, gateway: ServeProcess, fake: FakeSlackServer
) -> None:
    await wait_until(condition, what, lambda: f"{gateway.output()}\n{_posts(fake)}")


async def test_a_dm_is_answered_once_even_when_slack_delivers_it_twice(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeSlackServer() as fake:
        _write_config(home, fake)
        slack = Slack(fake)
        async with serving(home, slack_credentials(fake, SECRET)) as gateway:
            body = fake.event_body(fake.message(dm_channel(ALICE), ALICE, "hello-gateway"))
            await slack.ack(gateway, body)
            await _wait(lambda: _replies(fake, "hello-gateway") == 1, "the reply", gateway, fake)
            (post,) = _posts(fake)
            assert post["channel"] == dm_channel(ALICE) and "thread_ts" not in post
            assert "[offline model]" in str(post["text"])
            # Slack re-delivers an event it believes unanswered in time; the gateway answers it once.
            await slack.ack(gateway, body)
            await slack.ack(gateway, slack.dm("after-duplicate"))
            await _wait(lambda: _replies(fake, "after-duplicate") == 1, "the next reply", gateway, fake)
            assert _replies(fake, "hello-gateway") == 1
            async with httpx.AsyncClient(base_url=gateway.base_url) as client:
                checks = (await client.get("/readyz")).json()["checks"]
            assert checks["adapter:slack"].startswith("ok (http as mnemo in Fake team; last inbound")
        assert SECRET not in gateway.output() and fake.bot_token not in gateway.output()


def _in_thread(fake: FakeSlackServer, mention: dict[str, Any]) -> int:
    return sum(
        1 for post in _posts(fake) if (post.get("channel"), post.get("thread_ts")) == (GENERAL, mention["ts"])
    )


def _thread_checkpoints(home: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT key, position FROM adapter_checkpoints WHERE platform = 'slack'")
        return {str(key): int(position) for key, position in rows if str(key).startswith("thread:")}


@EACH_STOP_SIGNAL
async def test_a_restart_with_messages_waiting_loses_none_and_answers_none_twice(
    tmp_path: Path, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    async with FakeSlackServer() as fake, FakeOpenAIServer(default=ANSWER) as model:
        _write_config(home, fake, model)
        gateway, slack = ServeProcess(home, slack_credentials(fake, SECRET)), Slack(fake)
        await gateway.start()
        try:
            mention = fake.mention(GENERAL, USERS["thread"], "start a thread")
            await slack.ack(gateway, fake.event_body(mention))
            for word in ("before-0", "before-1"):
                await slack.ack(gateway, slack.dm(word))
            await _wait(
                lambda: _in_thread(fake, mention) == 1 and _replies_to(fake, "before-1") == 1,
                "replies before the stop",
                gateway,
                fake,
            )
            # Slack gets a 2xx for these (stored), but the model is still thinking when the gateway stops:
            # some turns are running, the rest wait in the queue.
            model.default, asked = THINKING, len(model.requests)
            acked = [f"acked-{n}" for n in range(CONCURRENCY + 2)]
            await asyncio.gather(*(slack.ack(gateway, slack.dm(word)) for word in acked))
            await model.wait_for_requests(asked + CONCURRENCY, timeout_s=10)
            assert not any(_replies_to(fake, word) for word in acked)
            # Racing the stop: either acked (then it must be answered) or not (then Slack's retry must be).
            racing = asyncio.create_task(slack.say(gateway, "racing-stop"))
            await gateway.stop(sig)
            await racing
            model.default = ANSWER
            for word in ("down-0", "down-1"):  # connection refused while the gateway is down
                assert not await slack.say(gateway, word)
            gateway = ServeProcess(home, slack_credentials(fake, SECRET))
            await gateway.start()
            await slack.redeliver(gateway)  # Slack's retries of everything that got no 2xx
            assert not slack.unacked, slack.answers
            follow_up = fake.message(GENERAL, USERS["thread"], "and then?", thread_ts=mention["ts"])
            await slack.ack(gateway, fake.event_body(follow_up))  # no mention: the thread is ours
            words = ["before-0", "before-1", *acked, "racing-stop", "down-0", "down-1"]
            await _wait(lambda: all(_replies_to(fake, w) >= 1 for w in words), "every reply", gateway, fake)
            # A later message answered means the restarted gateway went through everything before it.
            await slack.ack(gateway, slack.dm("last"))
            await _wait(lambda: _replies_to(fake, "last") == 1, "the last reply", gateway, fake)
            await _wait(lambda: _in_thread(fake, mention) == 2, "the reply in the thread", gateway, fake)
            assert {w: _replies_to(fake, w) for w in words} == dict.fromkeys(words, 1)
        finally:
            await gateway.stop(signal.SIGTERM)
        assert f"thread:{fake.team_id}:{GENERAL}:{mention['ts']}" in _thread_checkpoints(home)
