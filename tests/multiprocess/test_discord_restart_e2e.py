"""End to end through ``mnemogate serve``: the real Discord adapter against the fake Discord.

A DM gets the offline model's reply; a MESSAGE_CREATE delivered twice is answered once; a gateway stopped
(SIGTERM or kill -9) while messages wait answers every one of them after its restart, none twice, the
waiting ones fetched from the channels' history by the adapter's catch-up (Discord does not re-deliver).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.adapters.fakes.discord_server import FakeDiscordServer, Json, user_payload
from tests.multiprocess.platform_config import allowlist, discord_credentials, discord_options, write_config
from tests.multiprocess.serve_process import EACH_STOP_SIGNAL, ServeProcess, serving, wait_until

WORDS = ["before-0", "before-1", "racing-stop", "waiting-0", "waiting-1", "waiting-2", "last"]
# One user (and so one DM channel, one conversation) per message: each gets exactly one reply.
USERS = {word: user_payload(5000 + n, f"user{n}") for n, word in enumerate(["hello", "again", *WORDS])}
DM_CHANNELS = {word: 610000000000000000 + n for n, word in enumerate(USERS)}


def _write_config(home: Path, fake: FakeDiscordServer) -> None:
    write_config(
        home,
        adapters={"discord": discord_options(fake)},
        access={"discord": allowlist(*(user["id"] for user in USERS.values()))},
    )


def _replies_to(fake: FakeDiscordServer, word: str) -> list[str]:
    """What the bot said in ``word``'s DM as its user sees it (greetings are answered there too); a send
    repeated after a crash with the same nonce is one message, as on Discord."""
    return fake.bot_messages(DM_CHANNELS[word])


def _answers(fake: FakeDiscordServer, word: str) -> int:
    return sum(1 for text in _replies_to(fake, word) if word in text)


async def _wait(
    condition: Callable[[], bool], what: str, gateway: ServeProcess, fake: FakeDiscordServer
) -> None:
    def describe() -> str:
        sent = [(call.channel_id, call.body.get("content")) for call in fake.calls_to("create_message")]
        return f"{gateway.output()}\n{sent}"

    await wait_until(condition, what, describe)


def _said(fake: FakeDiscordServer, word: str, text: str | None = None) -> Json:
    return fake.message(USERS[word], text or word, channel_id=DM_CHANNELS[word], guild=False)


async def test_a_dm_is_answered_once_even_when_discord_delivers_it_twice(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeDiscordServer() as fake:
        _write_config(home, fake)
        async with serving(home, discord_credentials(fake)) as gateway:
            said = _said(fake, "hello")
            await fake.post(said)
            await _wait(lambda: _answers(fake, "hello") == 1, "the reply", gateway, fake)
            assert "offline model" in _replies_to(fake, "hello")[0]
            await fake.post(said)  # a gateway replay re-sends the same message id
            await fake.post(_said(fake, "again"))
            await _wait(lambda: _answers(fake, "again") == 1, "the next reply", gateway, fake)
            assert _answers(fake, "hello") == 1
            async with httpx.AsyncClient(base_url=gateway.base_url) as client:
                checks = (await client.get("/readyz")).json()["checks"]
                metrics = (await client.get("/metrics")).text
            assert checks["adapter:discord"].startswith("ok")
            assert 'mnemogate_adapter_connected{platform="discord"} 1.0' in metrics
        assert fake.token not in gateway.output()


@EACH_STOP_SIGNAL
async def test_a_restart_with_messages_waiting_loses_none_and_answers_none_twice(
    tmp_path: Path, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    waiting = [f"waiting-{n}" for n in range(3)]
    async with FakeDiscordServer() as fake:
        _write_config(home, fake)
        gateway = ServeProcess(home, discord_credentials(fake))
        await gateway.start()
        try:
            # Discord only lets a bot read channels it knows: these users talked to it before.
            for word in ["racing-stop", *waiting]:
                await fake.post(_said(fake, word, "greetings"))
            for word in ["before-0", "before-1"]:
                await fake.post(_said(fake, word))
            greeted = ["racing-stop", *waiting]
            await _wait(
                lambda: all(_replies_to(fake, w) for w in greeted) and _answers(fake, "before-1") >= 1,
                "replies before the stop",
                gateway,
                fake,
            )
            await fake.post(_said(fake, "racing-stop"))  # may or may not be taken before the stop
            await gateway.stop(sig)
            for word in waiting:
                await fake.post(_said(fake, word), deliver=False)  # the bot is offline: never dispatched
            gateway = ServeProcess(home, discord_credentials(fake))
            await gateway.start()
            words = ["before-0", "before-1", "racing-stop", *waiting]
            await _wait(lambda: all(_answers(fake, w) >= 1 for w in words), "every reply", gateway, fake)
            # A later message answered means the restarted gateway went through everything before it.
            await fake.post(_said(fake, "last"))
            await _wait(lambda: _answers(fake, "last") == 1, "the last reply", gateway, fake)
            assert {w: _answers(fake, w) for w in words} == dict.fromkeys(words, 1)
            assert all(len(_replies_to(fake, w)) == 2 for w in greeted)  # the greeting and the word
        finally:
            await gateway.stop(signal.SIGTERM)
