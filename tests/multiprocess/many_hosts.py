"""Several ``mnemogate serve`` hosts on one PostgreSQL schema, and the people who talk to them.

``Cluster`` runs one serve process per home (each host has its own home; everything shared lives in the one
schema), kills and restarts them, and says which one owns the Telegram lease. ``TelegramChats`` speaks for
Telegram users through the fake Bot API and reads what the bot sent each chat. ``Browser`` is one web chat
user with its own cookie, sent by a "load balancer" to a host of its choosing and to the next live one when
that host is down (posting again with the same client message id, as the page does). The offline model
answers every line with ``you said: <line>``, which is how a reply is matched to its message.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from gateway.storage.queue import JobRecord
from tests import postgres_server
from tests.adapters.fakes.telegram_server import FakeTelegramServer, Json, private_chat
from tests.multiprocess.platform_config import Section, write_config
from tests.multiprocess.serve_process import ServeProcess, wait_until
from tests.webchat_items import shown_text

ADMIN_TOKEN = "many-hosts-admin-token-0123456789"
OWNED = "owned by this host"


def said(line: str) -> str:
    """What the offline model's answer to ``line`` contains."""
    return f"you said: {line}\n"


def postgres_storage(first_home: Path, **postgres: object) -> Section:
    """The ``storage`` section of every host: this run's database, one schema named after the first home."""
    database = {
        "dsn": postgres_server.run_dsn(),
        "schema": postgres_server.schema_for(first_home),
        **postgres,
    }
    return {"backend": "postgres", "postgres": database}


class Cluster:
    """One serve process per home on one database; ``hosts[i]`` is home ``i``'s current process."""

    def __init__(self, homes: Sequence[Path], credentials: Mapping[str, str]) -> None:
        self.homes = list(homes)
        self.credentials = dict(credentials)
        self.hosts = [ServeProcess(home, credentials) for home in homes]
        self._stopped: list[ServeProcess] = []

    @classmethod
    def configured(
        cls,
        root: Path,
        count: int,
        *,
        adapters: dict[str, Section],
        access: dict[str, Section],
        credentials: Mapping[str, str],
        storage: Section | None = None,
        **sections: Section,
    ) -> Cluster:
        """``count`` homes under ``root`` (host-a, host-b, …), each with the same config.yaml."""
        homes = [root / f"host-{chr(ord('a') + n)}" for n in range(count)]
        http = {"admin_token": ADMIN_TOKEN, **sections.pop("http", {})}
        for home in homes:
            write_config(
                home,
                adapters=adapters,
                access=access,
                storage=storage or postgres_storage(homes[0]),
                http=http,
                **sections,
            )
        return cls(homes, credentials)

    async def start(self) -> None:
        """Start every host, one after another (the first one creates the schema)."""
        for host in self.hosts:
            await host.start()

    async def stop(self) -> None:
        for host in self.hosts:
            if host.process is not None:
                await host.stop(signal.SIGTERM)

    async def kill(self, index: int) -> None:
        """kill -9 host ``index``; its log stays readable in ``describe``."""
        await self.hosts[index].stop(signal.SIGKILL)
        self._stopped.append(self.hosts[index])

    async def restart(self, index: int) -> None:
        """Start host ``index`` again on the same home (a new process, a new port) and wait until ready."""
        self.hosts[index] = ServeProcess(self.homes[index], self.credentials)
        await self.hosts[index].start()

    def alive(self) -> list[ServeProcess]:
        return [h for h in self.hosts if h.process is not None and h.process.returncode is None]

    async def readiness(self, host: ServeProcess) -> httpx.Response | None:
        """``/readyz`` of ``host`` (None while nothing answers); its probes may take their full timeout
        while the database is away."""
        async with httpx.AsyncClient(timeout=10) as client:
            try:
                return await client.get(f"{host.base_url}/readyz")
            except httpx.TransportError:
                return None

    async def adapter_detail(self, host: ServeProcess, adapter: str = "telegram") -> str:
        answer = await self.readiness(host)
        if answer is None:
            return "no answer"
        return str(answer.json()["checks"].get(f"adapter:{adapter}", "not configured"))

    async def all_ready(self, status: int) -> bool:
        """Whether every host's ``/readyz`` answers ``status`` (200 ready, 503 not) now."""
        answers = await asyncio.gather(*(self.readiness(host) for host in self.hosts))
        return all(answer is not None and answer.status_code == status for answer in answers)

    async def owner(self, adapter: str = "telegram") -> int | None:
        """The index of the host whose /readyz says it owns ``adapter`` now (None: no host does)."""
        for index, host in enumerate(self.hosts):
            if host in self.alive() and OWNED in await self.adapter_detail(host, adapter):
                return index
        return None

    async def wait_owned(self, *, not_by: int | None = None, adapter: str = "telegram") -> int:
        """Wait until a host other than ``not_by`` owns ``adapter``; its index."""
        found: list[int] = []

        async def owned() -> bool:
            index = await self.owner(adapter)
            found[:] = [] if index is None or index == not_by else [index]
            return bool(found)

        await wait_until(owned, f"a host to own {adapter}", self.describe)
        return found[0]

    def describe(self) -> str:
        """Every process's log, for failure messages."""
        every = [*self._stopped, *self.hosts]
        return "\n".join(f"---- {h.home.name} port {h.port}\n{h.output()[-6000:]}" for h in every)


class TelegramChats:
    """Telegram users in private chats with the bot: what they said, and every reply the bot sent them."""

    def __init__(self, fake: FakeTelegramServer) -> None:
        self.fake = fake
        self.sent: list[tuple[int, str]] = []
        """(user id, line) of every update pushed, in order."""
        self._replies: dict[int, list[tuple[float, str]]] = defaultdict(list)
        self._read = 0

    def say(self, user: Json, line: str) -> None:
        self.fake.push(self.fake.message_update(private_chat(user), user, line))
        self.sent.append((int(user["id"]), line))

    def replies(self, user_id: int) -> list[tuple[float, str]]:
        """(when the fake answered the send, text) of every message the bot sent the user's chat."""
        answers = self.fake.answers
        for answer in answers[self._read :]:
            if answer.call.method == "sendMessage":
                chat = int(answer.call.params["chat_id"])
                self._replies[chat].append((answer.call.at, str(answer.call.params.get("text", ""))))
        self._read = len(answers)
        return self._replies[user_id]

    def answers_to(self, user_id: int, line: str) -> list[float]:
        """When each reply answering ``line`` was sent (one entry per copy)."""
        return [at for at, text in self.replies(user_id) if said(line) in text]

    async def converse(self, user: Json, lines: Iterable[str], describe: Any) -> None:
        """Say each line once the previous one was answered."""
        for line in lines:
            self.say(user, line)
            await wait_until(
                lambda line=line: bool(self.answers_to(int(user["id"]), line)),
                f"a reply to {line!r}",
                describe,
            )


class Browser:
    """One web chat user: a cookie of its own, talking to ``cluster.hosts[prefer]`` while that host is up."""

    def __init__(self, cluster: Cluster, cookie: str, prefer: int) -> None:
        self.cluster = cluster
        self.prefer = prefer
        self.client = httpx.AsyncClient(cookies={"mnemogate_chat": cookie}, timeout=30)
        self._cursors: dict[int, str] = {}
        self._serials = itertools.count()
        self.last_host: ServeProcess | None = None
        """The host that took the last line."""
        self.refusals: list[str] = []
        """What a host answered when it could not take a line for now (503), as the browser was told."""

    async def aclose(self) -> None:
        await self.client.aclose()

    def _candidates(self) -> list[ServeProcess]:
        """The preferred host first, then the others (a load balancer skips hosts that do not answer)."""
        hosts = self.cluster.hosts
        return [hosts[(self.prefer + n) % len(hosts)] for n in range(len(hosts))]

    async def post(self, line: str, client_id: str) -> ServeProcess:
        """Post ``line`` until a host takes it, as the page does: the next host when one is down, the same
        line and id again after a 503 (the gateway could not take it now); the host that took it."""
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            for host in self._candidates():
                try:
                    answer = await self.client.post(
                        f"{host.base_url}/api/chat/messages",
                        json={"text": line, "client_message_id": client_id},
                    )
                except httpx.TransportError:
                    continue  # that host is down: the next one
                if answer.status_code == 503:
                    self.refusals.append(str(answer.json()["detail"]))
                    break
                assert answer.status_code == 200, answer.text
                return host
            await asyncio.sleep(0.3)  # the page's wait before sending again, not synchronisation
        raise AssertionError(f"no host accepted {line!r}:\n{self.cluster.describe()}")

    async def wait_reply(self, host: ServeProcess, answer: str, within_s: float = 40.0) -> str:
        """Long-poll ``host`` until a reply containing ``answer`` arrives; that reply. When the host goes
        down, the page reconnects to another and reloads the chat window (from the database) until the
        reply is there."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            try:
                if found := await self._poll(host, answer):
                    return found
            except httpx.TransportError:
                break
        while time.monotonic() < deadline:
            for other in self._candidates():
                try:
                    replies = await self.answers(other, answer)
                except httpx.TransportError:
                    continue  # down, or not listening yet after a restart
                if replies:
                    return replies[0]
                break
            await asyncio.sleep(0.3)  # the page's reload after a reconnect, not synchronisation
        raise AssertionError(f"no reply with {answer!r} within {within_s:g} s:\n{self.cluster.describe()}")

    async def _poll(self, host: ServeProcess, answer: str) -> str | None:
        after = self._cursors.get(host.port, "new.0")
        body = (
            await self.client.get(f"{host.base_url}/api/chat/messages", params={"after": after, "wait": 5})
        ).json()
        self._cursors[host.port] = body["cursor"]
        # Feed items carry the reply as sanitised HTML: compare its text.
        texts = (shown_text(str(m["html"])) + "\n" for m in body["messages"])
        return next((text for text in texts if answer in text), None)

    async def history(self, host: ServeProcess) -> list[dict[str, Any]]:
        """The chat window as a reload shows it (read from the database)."""
        reloaded = await self.client.get(f"{host.base_url}/api/chat/messages")
        reloaded.raise_for_status()
        return list(reloaded.json()["messages"])

    async def answers(self, host: ServeProcess, answer: str) -> list[str]:
        """The bot's messages in the chat window that contain ``answer``."""
        window = await self.history(host)
        return [str(m["text"]) for m in window if m["role"] == "assistant" and answer in str(m["text"])]

    async def say(self, line: str, *, answer: str | None = None, within_s: float = 40.0) -> str:
        """Post ``line`` and wait for the reply containing ``answer`` (the echo of ``line`` by default) on
        the host that took it; that reply."""
        host = await self.post(line, f"m{next(self._serials)}")
        self.last_host = host
        return await self.wait_reply(host, answer or said(line), within_s)


def overlapping_turns(jobs: Iterable[JobRecord]) -> list[tuple[int, int]]:
    """Pairs of job ids of one conversation whose runs overlapped (start before the other's finish)."""
    by_conversation: dict[str, list[JobRecord]] = defaultdict(list)
    for job in jobs:
        if job.started_at is not None and job.finished_at is not None:
            by_conversation[job.conversation_id].append(job)
    overlaps = []
    for runs in by_conversation.values():
        runs.sort(key=lambda job: job.started_at or 0.0)
        for before, after in itertools.pairwise(runs):
            if (after.started_at or 0.0) < (before.finished_at or 0.0):
                overlaps.append((before.id, after.id))
    return overlaps
