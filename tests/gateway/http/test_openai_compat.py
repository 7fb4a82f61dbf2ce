"""Existing OpenAI clients (the real ``openai`` SDK) talk to the agent through /v1/chat/completions."""

from __future__ import annotations

import openai
import pytest

from tests.gateway.http.conftest import ADMIN_TOKEN, API_TOKEN, Gateway


def _client(gateway: Gateway, key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{gateway.base_url}/v1", api_key=key, max_retries=0, timeout=15)


async def test_completion_answers_the_last_user_message_in_the_users_conversation(gateway: Gateway) -> None:
    async with _client(gateway, API_TOKEN) as client:
        first = await client.chat.completions.create(
            model="mnemogate",
            user="ops-bot",
            messages=[
                {"role": "system", "content": "ignored: the gateway owns the prompt"},
                {"role": "user", "content": "an older message the gateway already has"},
                {"role": "user", "content": "what is the weather"},
            ],
        )
        await client.chat.completions.create(
            model="mnemogate", user="ops-bot", messages=[{"role": "user", "content": "second question"}]
        )
    text = first.choices[0].message.content or ""
    assert text.startswith("[offline model]") and "what is the weather" in text
    assert first.choices[0].finish_reason == "stop"
    assert first.usage is not None
    convs = await gateway.runtime.state.run_read(
        lambda c: c.execute("SELECT count(*) FROM conversations WHERE platform = 'api'").fetchone()[0]
    )
    assert convs == 1
    live = await gateway.runtime.state.live_conversation("api:-:dm:ops%2Dbot:-:-")
    assert live is not None
    users = [
        m.content for m in await gateway.runtime.state.conversation_messages(live.id) if m.role == "user"
    ]
    assert users == ["what is the weather", "second question"]


async def test_streaming_yields_chunks_then_stop(gateway: Gateway) -> None:
    async with _client(gateway, ADMIN_TOKEN) as client:
        stream = await client.chat.completions.create(
            model="mnemogate",
            user="streamer",
            stream=True,
            messages=[{"role": "user", "content": "stream it"}],
        )
        pieces, finish = [], None
        async for chunk in stream:
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
    assert "stream it" in "".join(pieces)
    assert finish == "stop"


async def test_wrong_key_is_refused(gateway: Gateway) -> None:
    async with _client(gateway, "not-the-key") as client:
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


async def test_request_without_user_text_is_a_400(gateway: Gateway) -> None:
    async with _client(gateway, API_TOKEN) as client:
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="m", messages=[{"role": "system", "content": "only"}])
