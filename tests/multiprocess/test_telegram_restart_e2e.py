"""End to end through ``mnemogate serve``: the real Telegram adapter against the fake Bot API.

A DM gets the offline model's reply; a re-delivered update is answered once; a gateway stopped (SIGTERM or
kill -9) while messages wait answers every one of them after its restart, none twice.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.e2e.gateway_process import free_port
from tests.multiprocess.platform_config import allowlist, telegram_credentials, telegram_options, write_config
from tests.multiprocess.serve_process import EACH_STOP_SIGNAL, ServeProcess, serving, wait_until

ALICE = tg_user(4242, "Alice")
# One user per message in the restart tests: each is its own conversation, so each gets exactly one reply
# (messages of one conversation that wait together are answered by one turn).
USERS = {word: tg_user(5000 + n, f"User{n}") for n, word in enumerate(
    ["before-0", "before-1", "racing-stop", "waiting-0", "waiting-1", "waiting-2", "last"]
)}  # fmt: skip


def _write_config(home: Path, fake: FakeTelegramServer, **options: object) -> None:
    users = [ALICE, *USERS.values()]
    write_config(
        home,
        adapters={"telegram": telegram_options(fake, **options)},
        access={"telegram": allowlist(*(user["id"] for user in users))},
    )


def _replies(fake: FakeTelegramServer, word: str) -> int:
    return sum(1 for call in fake.calls_of("sendMessage") if word in str(call.params.get("text", "")))


def _shown(fake: FakeTelegramServer, word: str) -> bool:
    calls = fake.calls_of("sendMessage") + fake.calls_of("editMessageText")
    return any(word in str(call.params.get("text", "")) for call in calls)


def _replies_to(fake: FakeTelegramServer, word: str) -> int:
    user = USERS[word]
    return sum(1 for call in fake.calls_of("sendMessage") if call.params.get("chat_id") == user["id"])


def _sent(fake: FakeTelegramServer) -> list[tuple[object, object]]:
    return [(call.params.get("chat_id"), call.params.get("text")) for call in fake.calls_of("sendMessage")]


async def _wait(
    condition: Callable[[], bool], what: str, gateway: ServeProcess, fake: FakeTelegramServer
) -> None:
    await wait_until(condition, what, lambda: f"{gateway.output()}\n{_sent(fake)}")


async def _all_recorded(gateway: ServeProcess) -> bool:
    """Every reply sent is recorded as sent (``/metrics``). A gateway killed between a send and its record
    sends that reply again after the restart: Telegram takes no idempotency key, so nothing can tell."""
    async with httpx.AsyncClient(base_url=gateway.base_url, timeout=5) as client:
        return "mnemogate_outbox_pending 0.0" in (await client.get("/metrics")).text


async def _say(fake: FakeTelegramServer, text: str) -> dict[str, object]:
    user = USERS.get(text, ALICE)
    update = fake.message_update(private_chat(user), user, text)
    fake.push(update)
    return update


async def test_a_dm_is_answered_once_even_when_telegram_delivers_it_twice(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeTelegramServer() as fake:
        _write_config(home, fake)
        async with serving(home, telegram_credentials(fake)) as gateway:
            update = await _say(fake, "hello-gateway")
            await _wait(lambda: _replies(fake, "hello-gateway") == 1, "the reply", gateway, fake)
            (call,) = fake.calls_of("sendMessage")
            assert call.params["chat_id"] == ALICE["id"]
            assert "[offline model]" in str(call.params["text"])
            # Telegram re-delivers an update it believes unconfirmed; the gateway's ledger answers it once.
            await _wait(
                lambda: update["update_id"] not in fake.pending_update_ids, "confirmation", gateway, fake
            )
            fake.push(update)
            await _say(fake, "after-duplicate")
            await _wait(lambda: _replies(fake, "after-duplicate") == 1, "the next reply", gateway, fake)
            assert _replies(fake, "hello-gateway") == 1
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway.port}") as client:
                checks = (await client.get("/readyz")).json()["checks"]
                metrics = (await client.get("/metrics")).text
            assert checks["adapter:telegram"].startswith("ok (polling as @mnemo_bot; last inbound")
            assert 'mnemogate_adapter_connected{platform="telegram"} 1.0' in metrics
            assert 'mnemogate_adapter_last_send_timestamp_seconds{platform="telegram"}' in metrics
        assert fake.token not in gateway.output()


async def test_a_streamed_reply_reaches_telegram_as_one_message_with_the_final_text(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeTelegramServer() as fake:
        _write_config(home, fake, streaming=True)
        async with serving(home, telegram_credentials(fake)) as gateway:
            await _say(fake, "stream-me")
            await _wait(lambda: _shown(fake, "stream-me"), "the streamed reply", gateway, fake)
            await _say(fake, "and-again")  # the next turn starts only after the first was delivered
            await _wait(lambda: _shown(fake, "and-again"), "the next reply", gateway, fake)
            first, _ = fake.calls_of("sendMessage")  # one message per turn, never a second one
            assert "stream-me" not in str(first.params["text"])  # it was sent while still growing
            edits = fake.calls_of("editMessageText")
            assert edits and "[offline model]" in str(edits[-1].params["text"])
            assert len({call.params["message_id"] for call in edits}) <= 2  # only the two sent messages


@EACH_STOP_SIGNAL
async def test_a_restart_with_messages_waiting_loses_none_and_answers_none_twice(
    tmp_path: Path, sig: signal.Signals
) -> None:
    home = tmp_path / "home"
    async with FakeTelegramServer() as fake:
        _write_config(home, fake)
        gateway = ServeProcess(home, telegram_credentials(fake))
        await gateway.start()
        try:
            await _say(fake, "before-0")
            await _say(fake, "before-1")
            await _wait(lambda: _replies_to(fake, "before-1") >= 1, "replies before the stop", gateway, fake)
            await wait_until(lambda: _all_recorded(gateway), "the replies recorded", gateway.output)
            await _say(fake, "racing-stop")  # may or may not be taken before the stop: either way once
            await gateway.stop(sig)
            waiting = [f"waiting-{n}" for n in range(3)]
            for word in waiting:
                await _say(fake, word)
            gateway = ServeProcess(home, telegram_credentials(fake))
            await gateway.start()
            words = ["before-0", "before-1", "racing-stop", *waiting]
            await _wait(lambda: all(_replies_to(fake, w) >= 1 for w in words), "every reply", gateway, fake)
            # A later message answered means the restarted gateway went through everything before it.
            await _say(fake, "last")
            await _wait(lambda: _replies_to(fake, "last") == 1, "the last reply", gateway, fake)
            assert {w: _replies_to(fake, w) for w in words} == dict.fromkeys(words, 1)
            assert all(_replies(fake, w) == 1 for w in words)  # each reply echoes its own message
        finally:
            await gateway.stop(signal.SIGTERM)


async def test_a_gateway_started_while_telegram_is_away_connects_once_it_is_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    later = FakeTelegramServer(port=free_port())
    _write_config(home, later, start_retry_max_s=0.5)
    gateway = ServeProcess(home, telegram_credentials(later))
    await gateway.start(wait_ready=False)
    try:
        waiting = (await gateway.wait_readiness(503)).json()
        assert waiting["checks"]["adapter:telegram"].startswith("disconnected: not started: telegram is")
        async with later as fake:
            await gateway.wait_readiness(200)
            await _say(fake, "hello-gateway")
            await _wait(lambda: _replies(fake, "hello-gateway") == 1, "the reply", gateway, fake)
    finally:
        await gateway.stop(signal.SIGTERM)
