"""End to end through ``mnemogate serve`` with the offline model: "remind me in … to stretch" said on the web
chat and on Telegram (the real adapter against the fake Bot API) brings one reminder, once, to each; a
gateway killed (-9) while a reminder's delivery is failing delivers it once after its restart, without
firing or running it again; the literal one-minute phrase is the slow suite's (``make test-slow``)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import httpx
import pytest

from gateway.cli.main import main
from tests.adapters.fakes.telegram_server import FakeTelegramServer, private_chat, tg_user
from tests.multiprocess.platform_config import allowlist, telegram_credentials, telegram_options, write_config
from tests.multiprocess.serve_process import DEADLINE_S, ServeProcess, serving, wait_until
from tests.webchat_items import shown_text

ALICE = tg_user(4242, "Alice")
REMINDER = "⏰ Reminder: stretch"


class WebChat:
    """One browser of the web chat: what it says, and every message it was shown since it opened."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client, self.shown, self.cursor = client, list[str](), ""

    async def open(self) -> None:
        self.cursor = (await self.client.get("/api/chat/messages")).json()["cursor"]

    async def say(self, text: str) -> None:
        assert (await self.client.post("/api/chat/messages", json={"text": text})).status_code == 200

    async def until(self, word: str, within_s: float = DEADLINE_S) -> None:
        """Long-poll the feed until a shown message contains ``word``."""
        deadline = time.monotonic() + within_s
        while not any(word in text for text in self.shown):
            assert time.monotonic() < deadline, f"{word!r} not shown; shown: {self.shown}"
            page = (
                await self.client.get("/api/chat/messages", params={"after": self.cursor, "wait": 5})
            ).json()
            self.cursor = page["cursor"]
            self.shown += [shown_text(str(message["html"])) for message in page["messages"]]


def _telegram_shown(fake: FakeTelegramServer, word: str) -> int:
    return sum(1 for answer in fake.answered("sendMessage") if word in str(answer.result.get("text", "")))


def _tried(fake: FakeTelegramServer, word: str) -> bool:
    """Whether a send of ``word`` was attempted (answered or failed)."""
    return any(word in str(call.params.get("text")) for call in fake.calls_of("sendMessage"))


def _config(home: Path, fake: FakeTelegramServer, **sections: dict[str, object]) -> None:
    write_config(
        home,
        adapters={"telegram": telegram_options(fake)},
        access={"telegram": allowlist(ALICE["id"])},
        **sections,
    )


async def _remind_on_both(tmp_path: Path, phrase: str) -> None:
    home = tmp_path / "home"
    async with FakeTelegramServer() as fake:
        _config(home, fake)
        async with (
            serving(home, telegram_credentials(fake)) as gateway,
            httpx.AsyncClient(base_url=gateway.base_url, timeout=30) as client,
        ):
            web = WebChat(client)
            await web.open()
            await web.say(phrase)
            fake.push(fake.message_update(private_chat(ALICE), ALICE, phrase))
            await web.until("reminder #")  # the confirmation
            await web.until(REMINDER, within_s=DEADLINE_S + 60)
            await wait_until(
                lambda: _telegram_shown(fake, REMINDER) >= 1, "the Telegram reminder", gateway.output
            )
            # Messages answered after the reminders: whatever was queued before them was delivered.
            await web.say("thanks-web")
            fake.push(fake.message_update(private_chat(ALICE), ALICE, "thanks-telegram"))
            await web.until("thanks-web")
            await wait_until(
                lambda: _telegram_shown(fake, "thanks-telegram") == 1, "the reply", gateway.output
            )
            assert web.shown.count(REMINDER) == 1
            assert _telegram_shown(fake, REMINDER) == 1
            assert _telegram_shown(fake, "Okay — reminder #") == 1


async def test_remind_me_in_seconds_arrives_once_on_the_web_chat_and_on_telegram(tmp_path: Path) -> None:
    await _remind_on_both(tmp_path, "remind me in 2 seconds to stretch")


@pytest.mark.slow
async def test_remind_me_in_1_minute_arrives_once_on_the_web_chat_and_on_telegram(tmp_path: Path) -> None:
    await _remind_on_both(tmp_path, "remind me in 1 minute to stretch")


def _runs(home: Path) -> list[dict[str, object]]:
    """``mnemogate schedule show 1 --json`` (run in the test process: the gateway is stopped)."""
    from contextlib import redirect_stdout
    from io import StringIO

    printed = StringIO()
    with redirect_stdout(printed):
        assert main(["schedule", "show", "1", "--json", "--home", str(home)]) == 0
    return list(json.loads(printed.getvalue())["runs"])


async def test_a_gateway_killed_while_a_reminder_is_failing_to_arrive_delivers_it_once_after_restart(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with FakeTelegramServer() as fake:
        # A dead gateway's claims end after 2 s; retries come quickly and do not give up meanwhile.
        _config(
            home,
            fake,
            delivery={"claim_s": 2, "backoff_initial_s": 0.2, "backoff_max_s": 0.5, "max_attempts": 50},
        )
        gateway = ServeProcess(home, telegram_credentials(fake))
        await gateway.start()
        try:
            fake.push(fake.message_update(private_chat(ALICE), ALICE, "remind me in 2 seconds to stretch"))
            await wait_until(
                lambda: _telegram_shown(fake, "Okay — reminder #1") == 1, "the confirmation", gateway.output
            )
            for _ in range(50):
                fake.fail_next("sendMessage", 502, "Bad Gateway")
            await wait_until(
                lambda: _tried(fake, REMINDER), "a failed delivery of the reminder", gateway.output
            )
            await gateway.stop(signal.SIGKILL)
            fake.clear_failures()
            gateway = ServeProcess(home, telegram_credentials(fake))
            await gateway.start()
            await wait_until(
                lambda: _telegram_shown(fake, REMINDER) == 1, "the reminder after restart", gateway.output
            )
            fake.push(fake.message_update(private_chat(ALICE), ALICE, "after-restart"))
            await wait_until(
                lambda: _telegram_shown(fake, "after-restart") == 1, "the next reply", gateway.output
            )
            assert _telegram_shown(fake, REMINDER) == 1
        finally:
            await gateway.stop(signal.SIGTERM)
    (run,) = await asyncio.to_thread(_runs, home)
    assert (run["task"], run["delivery"]) == ("ran", "sent")
