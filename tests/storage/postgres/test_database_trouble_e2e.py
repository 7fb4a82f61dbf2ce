"""Two hosts on PostgreSQL while the database gets into trouble: every connection dropped, then a restart.

Each host is a real ``mnemogate serve`` reaching the database through a loopback proxy (``TcpProxy``), with
Telegram (long polling, under a lease) and browsers talking to both. First the server drops every one of
the gateway's connections at once (``pg_terminate_backend``) in the middle of the conversation; then it
"restarts": every connection is cut and new ones are refused for a few seconds, then accepted again. The
hosts reconnect by themselves; ``/readyz`` says not-ready (503) while the database is away and ready
afterwards; a browser's message sent meanwhile is refused with a clear 503 (nothing half-stored: sent
again with the same id once the database is back, it is answered once); a Telegram message sent meanwhile
waits at Telegram and is answered after; every message accepted before, during and after is answered
exactly once; and Telegram's lease is held again by one of the hosts.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path

import psycopg

from gateway.storage import open_storage
from tests import postgres_server
from tests.adapters.fakes.telegram_server import FakeTelegramServer, tg_user
from tests.multiprocess.many_hosts import Browser, Cluster, TelegramChats, overlapping_turns, postgres_storage
from tests.multiprocess.platform_config import telegram_credentials, telegram_options
from tests.multiprocess.serve_process import wait_until
from tests.storage.postgres.tcp_proxy import TcpProxy, dsn_through

LEASE_S = 3.0
AWAY_S = 4.0
"""How long the "restarting" server refuses connections."""
BROWSERS = 8
TELEGRAM_USERS = 8
LINES = 4


async def no_owner(cluster: Cluster) -> bool:
    """Every host stands by for Telegram (none polls it)."""
    details = await asyncio.gather(*(cluster.adapter_detail(host) for host in cluster.hosts))
    return all("standby" in detail for detail in details)


def drop_every_gateway_connection() -> int:
    """What a server's administrator (or a failover) does: end every mnemogate backend of this database."""
    with psycopg.connect(postgres_server.run_dsn(), autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name LIKE 'mnemogate%%' AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


async def test_hosts_ride_out_dropped_connections_and_a_database_restart(
    proxy: TcpProxy, tmp_path: Path
) -> None:
    users = [tg_user(80_000 + n, f"User{n}") for n in range(TELEGRAM_USERS)]
    async with FakeTelegramServer() as fake:
        cluster = Cluster.configured(
            tmp_path,
            2,
            adapters={"telegram": telegram_options(fake, lease_s=LEASE_S)},
            access={"telegram": {"mode": "open"}},
            credentials=telegram_credentials(fake),
            storage=postgres_storage(
                tmp_path / "host-a", dsn=dsn_through(proxy, postgres_server.run_dsn()), connect_timeout_s=1
            ),
            queue={"lease_s": 3},
            delivery={"claim_s": 3},
        )
        chats = TelegramChats(fake)
        browsers = [Browser(cluster, secrets.token_urlsafe(24), prefer=n % 2) for n in range(BROWSERS)]

        async def talk(round_name: str) -> None:
            """Every browser and Telegram user says ``LINES`` lines, each after the answer to the last."""

            async def browser_says(n: int, browser: Browser) -> None:
                for line in range(LINES):
                    await browser.say(f"{round_name} browser {n} line {line}")

            async def telegram_says(user: dict[str, object]) -> None:
                lines = [f"{round_name} tg {user['id']} line {line}" for line in range(LINES)]
                await chats.converse(user, lines, cluster.describe)

            await asyncio.gather(
                *(browser_says(n, b) for n, b in enumerate(browsers)), *(telegram_says(u) for u in users)
            )

        try:
            await cluster.start()
            # (a) Every connection dropped at once, in the middle of the conversation.
            talking = asyncio.create_task(talk("dropped"))
            await wait_until(lambda: len(chats.sent) >= TELEGRAM_USERS * 2, "traffic", cluster.describe)
            accepted_before = proxy.accepted
            assert await asyncio.to_thread(drop_every_gateway_connection) > 0
            await talking
            assert proxy.accepted > accepted_before  # the hosts opened new connections by themselves
            await wait_until(lambda: cluster.all_ready(200), "ready after the drop", cluster.describe)

            # (b) The server restarts: connections cut, new ones refused for a while, then accepted.
            await proxy.refuse()
            went_away = time.monotonic()
            await wait_until(
                lambda: cluster.all_ready(503), "not-ready while the database is away", cluster.describe
            )
            # The owner, unable to renew its lease, stops polling: Telegram keeps what arrives meanwhile.
            await wait_until(lambda: no_owner(cluster), "the owner letting Telegram go", cluster.describe)
            refused = await browsers[0].client.post(
                f"{cluster.hosts[0].base_url}/api/chat/messages",
                json={"text": "sent while the database is away", "client_message_id": "away-1"},
            )
            assert refused.status_code == 503, refused.text
            assert "database" in refused.json()["detail"] and "again" in refused.json()["detail"]
            chats.say(users[0], "telegram while the database is away")
            remaining = AWAY_S - (time.monotonic() - went_away)
            await asyncio.sleep(max(remaining, 0.0))  # the rest of the server's downtime, not synchronisation
            await proxy.accept()
            await wait_until(lambda: cluster.all_ready(200), "ready again", cluster.describe)
            await cluster.wait_owned()  # one host holds Telegram's lease again

            # What was refused is sent again, same id: answered once; what waited at Telegram is answered.
            resent = await browsers[0].client.post(
                f"{cluster.hosts[0].base_url}/api/chat/messages",
                json={"text": "sent while the database is away", "client_message_id": "away-1"},
            )
            assert resent.status_code == 200, resent.text
            await browsers[0].wait_reply(cluster.hosts[0], "you said: sent while the database is away\n")
            await wait_until(
                lambda: bool(chats.answers_to(int(users[0]["id"]), "telegram while the database is away")),
                "the Telegram message sent while the database was away",
                cluster.describe,
            )
            await talk("restarted")
        finally:
            for browser in browsers:
                await browser.aclose()
            await cluster.stop()

        for user_id, line in chats.sent:
            assert len(chats.answers_to(user_id, line)) == 1, (line, chats.replies(user_id))
        assert fake.pending_update_ids == []

    async with open_storage(tmp_path, postgres_server.storage_settings(cluster.homes[0])) as storage:
        tallies = await storage.admin.message_tallies()
        jobs = await storage.queue.jobs()
    # Each conversation: every message once, each with one answer (the two sent while away included).
    assert len(tallies) == BROWSERS + TELEGRAM_USERS
    assert all(t.user_messages == t.assistant_replies for t in tallies), tallies
    assert sum(t.user_messages for t in tallies) == 2 * LINES * (BROWSERS + TELEGRAM_USERS) + 2
    assert overlapping_turns(jobs) == []
