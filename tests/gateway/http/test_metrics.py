"""``/metrics``: Prometheus text with turns, latency, queue depth, tokens, retries and delivery failures."""

from __future__ import annotations

import time
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from agent_core.storage import ModelCall, Principal
from gateway.http import Metrics
from gateway.storage.admin_reads import FinishedTurn, GatewayCounters
from tests.gateway.http.conftest import Gateway


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


@dataclass
class _Reads:
    """The two reads a scrape makes, answered from fixed rows (the backend's are contract-tested)."""

    counters: GatewayCounters
    finished: tuple[FinishedTurn, ...] = ()

    async def gateway_counters(self) -> GatewayCounters:
        return self.counters

    async def finished_turns(self, finished_after: float, *, limit: int = 10_000) -> tuple[FinishedTurn, ...]:
        return tuple(turn for turn in self.finished if turn.finished_at > finished_after)[:limit]


def _reads(jobs: dict[str, int], outbox: dict[str, int], latencies: list[float]) -> _Reads:
    now = time.time()
    counters = GatewayCounters(tuple(jobs.items()), tuple(outbox.items()), 120, 30, 100, 0)
    return _Reads(counters, tuple(FinishedTurn(n, now + n, s) for n, s in enumerate(latencies, start=1)))


async def test_scrape_maps_the_stored_counters_to_turns_latency_queue_tokens_and_failures() -> None:
    reads = _reads(
        {"done": 2, "failed": 1, "queued": 2, "running": 1}, {"failed": 1, "pending": 3}, [0.2, 3, 0.05]
    )
    metrics = Metrics(reads)
    metrics.count_inbound("web", "accepted")
    samples = _samples((await metrics.render()).decode())
    assert samples[("mnemogate_turns_total", (("outcome", "ok"),))] == 2
    assert samples[("mnemogate_turns_total", (("outcome", "failed"),))] == 1
    assert samples[("mnemogate_queue_depth", (("state", "queued"),))] == 2
    assert samples[("mnemogate_queue_depth", (("state", "running"),))] == 1
    assert samples[("mnemogate_turn_latency_seconds_count", ())] == 3
    assert samples[("mnemogate_turn_latency_seconds_bucket", (("le", "0.25"),))] == 2
    assert samples[("mnemogate_model_tokens_total", (("kind", "cache_read"),))] == 100
    assert samples[("mnemogate_model_tokens_total", (("kind", "input"),))] == 120
    assert samples[("mnemogate_delivery_failures_total", ())] == 1
    assert samples[("mnemogate_outbox_pending", ())] == 3
    assert samples[("mnemogate_inbound_messages_total", (("outcome", "accepted"), ("platform", "web")))] == 1


async def test_latency_is_observed_once_per_turn_across_scrapes() -> None:
    metrics = Metrics(_reads({"done": 1}, {}, [0.5]))
    await metrics.render()
    second = _samples((await metrics.render()).decode())
    assert second[("mnemogate_turn_latency_seconds_count", ())] == 1


async def test_the_served_scrape_reads_the_database(gateway: Gateway) -> None:
    record = await gateway.runtime.storage.agent.ensure_conversation(
        "web:-:dm:m:-:-", Principal(person_id="p")
    )
    await gateway.runtime.storage.agent.add_usage(
        record.tip_session_id, ModelCall(input_tokens=120, output_tokens=30, cache_read_tokens=100)
    )
    async with gateway.client() as client:
        response = await client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    samples = _samples(response.text)
    assert samples[("mnemogate_model_tokens_total", (("kind", "cache_read"),))] == 100
    assert samples[("mnemogate_model_tokens_total", (("kind", "input"),))] == 120
    assert samples[("mnemogate_turns_total", (("outcome", "ok"),))] == 0
    assert ("mnemogate_db_write_retries_total", ()) in samples
    assert samples[("mnemogate_memory_provider_healthy", (("provider", "builtin"),))] == 1


async def test_each_app_has_its_own_registry() -> None:
    first, second = Metrics(), Metrics()
    first.set_provider_health("honcho", False)
    first_text, second_text = (await first.render()).decode(), (await second.render()).decode()
    assert 'mnemogate_memory_provider_healthy{provider="honcho"} 0.0' in first_text
    assert "honcho" not in second_text
    assert "mnemogate_turns_total" in second_text


async def test_cost_and_tokens_per_platform_and_model_are_summed_from_the_usage_log(gateway: Gateway) -> None:
    agent = gateway.runtime.storage.agent
    web = await agent.ensure_conversation("web:-:dm:a:-:-", Principal(person_id="a", platform="web"))
    api = await agent.ensure_conversation("api:-:dm:b:-:-", Principal(person_id="b", platform="api"))
    await agent.add_usage(web.tip_session_id, ModelCall(100, 10, cost_usd=0.5, model="gpt-4o"))
    await agent.add_usage(
        web.tip_session_id, ModelCall(50, 5, 40, cost_usd=0.25, model="gpt-4o", kind="flush")
    )
    await agent.add_usage(api.tip_session_id, ModelCall(7, 3, model="my-llama"))
    async with gateway.client() as client:
        samples = _samples((await client.get("/metrics")).text)
    web_4o = (("model", "gpt-4o"), ("platform", "web"))
    assert samples[("mnemogate_cost_usd_total", web_4o)] == 0.75
    assert samples[("mnemogate_tokens_total", (("kind", "input"), *web_4o))] == 150
    assert samples[("mnemogate_tokens_total", (("kind", "cache_read"), *web_4o))] == 40
    api_llama = (("model", "my-llama"), ("platform", "api"))
    assert samples[("mnemogate_cost_usd_total", api_llama)] == 0
    assert samples[("mnemogate_unpriced_model_calls_total", api_llama)] == 1
    assert samples[("mnemogate_unpriced_model_calls_total", web_4o)] == 0
