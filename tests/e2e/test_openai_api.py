"""The real ``mnemogate serve`` process behind ``/v1``, its model a wire-level fake OpenAI server on loopback
that echoes what it was sent: model names, live streaming with usage, system messages, concurrent clients."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import openai

from agent_core.llm.fakes import FakeOpenAIServer, FakeReply, RecordedRequest
from tests.e2e.gateway_process import free_port, start, stop, wait_healthy

TOKEN = "e2e-api-token-0123456789"


def _echo(request: RecordedRequest) -> FakeReply:
    """Replies "echo: " and the newest user message as the model received it, in four pieces."""
    messages = request.body.get("messages")
    assert isinstance(messages, list)
    said = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    return FakeReply(text=f"echo: {said}", chunks=4, chunk_delay_s=0.01)


async def _streamed(client: openai.AsyncOpenAI, text: str, user: str) -> tuple[str, set[str]]:
    stream = await client.chat.completions.create(
        model="gpt-4o", user=user, stream=True, messages=[{"role": "user", "content": text}]
    )
    chunks = [chunk async for chunk in stream]
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices), {c.model for c in chunks}


async def test_serve_streams_the_configured_models_reply_with_instructions_and_many_clients(
    home: Path,
) -> None:
    async with FakeOpenAIServer(default=_echo) as fake:
        (home / "config.yaml").write_text(
            f"http:\n  api_token: {TOKEN}\nrate_limit:\n  enabled: false\n"
            f"model:\n  provider: openai\n  model: fake-gpt\n  base_url: {fake.base_url}\n",
            encoding="utf-8",
        )
        port = free_port()
        process = start(home, "serve", "--port", str(port))
        base_url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(base_url, process)
            async with openai.AsyncOpenAI(base_url=f"{base_url}/v1", api_key=TOKEN, max_retries=0) as client:
                models = [model.id async for model in client.models.list()]
                stream = await client.chat.completions.create(
                    model="gpt-4o",
                    user="ada",
                    stream=True,
                    stream_options={"include_usage": True},
                    messages=[
                        {"role": "system", "content": "Always answer in Latin."},
                        {"role": "user", "content": "salve"},
                    ],
                )
                chunks = [chunk async for chunk in stream]
                asks = [(f"question {n}", f"user-{n}") for n in range(4)]
                answers = await asyncio.gather(*(_streamed(client, text, user) for text, user in asks))
        finally:
            stop(process)
    assert models == ["fake-gpt"]
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    text = "".join(deltas)
    assert text.startswith("echo: salve\n\n<client-context>") and "Always answer in Latin." in text
    assert len(deltas) >= 3, "the reply arrived in the pieces the model sent"
    assert {c.model for c in chunks} == {"fake-gpt"}
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    first_call = fake.requests[0].body
    system = json.dumps([m for m in first_call["messages"] if m["role"] == "system"])  # type: ignore[union-attr]
    assert "Latin" not in system, "the frozen system prompt never carries a client's instructions"
    assert answers == [(f"echo: {text}", {"fake-gpt"}) for text, _ in asks]
