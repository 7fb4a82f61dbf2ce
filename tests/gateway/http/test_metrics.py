"""``/metrics``: Prometheus text with turns, latency, queue depth, tokens, retries and delivery failures."""

from __future__ import annotations

import sqlite3
import time

from prometheus_client.parser import text_string_to_metric_families

from agent_core.storage.sqlite import Principal, TokenUsage
from gateway.http import Metrics
from tests.gateway.http.conftest import Gateway


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def _jobs(gateway: Gateway, states: list[tuple[str, float]]) -> None:
    """Turn-job rows as the queue leaves them (state, seconds from enqueue to finish)."""
    now = time.time()

    def write(conn: sqlite3.Connection) -> None:
        for state, seconds in states:
            finished = now if state in ("done", "failed") else None
            conn.execute(
                "INSERT INTO turn_jobs(conversation_id, state, created_at, finished_at)"
                " VALUES ('c', ?, ?, ?)",
                (state, now - seconds, finished),
            )
        conn.execute(
            "INSERT INTO outbox(conversation_id, chat_ref, idempotency_key, text, state, created_at)"
            " VALUES ('c', 'web', 'k1', 'x', 'failed', ?)",
            (now,),
        )

    await gateway.runtime.state.run_write(write)


async def test_scrape_reports_turns_latency_queue_tokens_and_failures(gateway: Gateway) -> None:
    await _jobs(
        gateway,
        [("done", 0.2), ("done", 3.0), ("failed", 0.05), ("queued", 0), ("queued", 0), ("running", 0)],
    )
    record = await gateway.runtime.state.ensure_conversation("web:-:dm:m:-:-", Principal(person_id="p"))
    await gateway.runtime.state.add_usage(
        record.tip_session_id, TokenUsage(input_tokens=120, output_tokens=30, cache_read_tokens=100)
    )
    gateway.metrics.count_inbound("web", "accepted")
    async with gateway.client() as client:
        response = await client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    samples = _samples(response.text)
    assert samples[("mnemogate_turns_total", (("outcome", "ok"),))] == 2
    assert samples[("mnemogate_turns_total", (("outcome", "failed"),))] == 1
    assert samples[("mnemogate_queue_depth", (("state", "queued"),))] == 2
    assert samples[("mnemogate_queue_depth", (("state", "running"),))] == 1
    assert samples[("mnemogate_turn_latency_seconds_count", ())] == 3
    assert samples[("mnemogate_turn_latency_seconds_bucket", (("le", "0.25"),))] == 2
    assert samples[("mnemogate_model_tokens_total", (("kind", "cache_read"),))] == 100
    assert samples[("mnemogate_model_tokens_total", (("kind", "input"),))] == 120
    assert samples[("mnemogate_delivery_failures_total", ())] == 1
    assert ("mnemogate_db_write_retries_total", ()) in samples
    assert samples[("mnemogate_memory_provider_healthy", (("provider", "builtin"),))] == 1
    assert samples[("mnemogate_inbound_messages_total", (("outcome", "accepted"), ("platform", "web")))] == 1


async def test_latency_is_observed_once_per_turn_across_scrapes(gateway: Gateway) -> None:
    await _jobs(gateway, [("done", 0.5)])
    async with gateway.client() as client:
        await client.get("/metrics")
        second = _samples((await client.get("/metrics")).text)
    assert second[("mnemogate_turn_latency_seconds_count", ())] == 1


async def test_each_app_has_its_own_registry() -> None:
    first, second = Metrics(), Metrics()
    first.set_provider_health("honcho", False)
    first_text, second_text = (await first.render()).decode(), (await second.render()).decode()
    assert 'mnemogate_memory_provider_healthy{provider="honcho"} 0.0' in first_text
    assert "honcho" not in second_text
    assert "mnemogate_turns_total" in second_text
